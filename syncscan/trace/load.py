"""Read a Kineto trace (.json or .json.gz) in one streaming pass into a compact `Trace`.

The file is read in chunks; each element of `traceEvents` is decoded on its own with the C
JSON scanner and handed to a handler for its category, which keeps a few numbers and drops
the dict. Peak memory is the compact model plus one chunk, whatever the file size.
"""

from __future__ import annotations

import gzip
import io
import json
import os
import re
import zlib
from typing import Any, Callable

from syncscan.errors import UserError
from syncscan.trace.model import (
    KERNEL, MEMCPY, MEMSET, CudaSync, DeviceActivity, HostIntervals, Memcpy, RuntimeCall, Step, Trace,
)

CHUNK_CHARS = 1 << 22
_WS = re.compile(r"[ \t\r\n]*")
_WS_COMMA = re.compile(r"[ \t\r\n,]*")

# top-level keys worth keeping (the rest of the header is skipped)
META_KEYS = {"schemaVersion", "deviceProperties", "baseTimeNanoseconds", "with_stack", "record_shapes",
             "cuda_runtime_version", "cuda_driver_version", "cupti_version", "distributedInfo",
             "traceName", "displayTimeUnit", "trace_id"}

# categories written by torch.profiler / Kineto; a file with none of them is not a trace of ours
KINETO_CATEGORIES = {"cpu_op", "user_annotation", "python_function", "cuda_runtime", "cuda_driver",
                     "kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_user_annotation",
                     "cuda_profiler_range", "Trace", "ac2g", "fwdbwd", "overhead"}

# runtime/driver calls kept: everything that can block the host or copy memory
_KEEP_CALL = re.compile(r"Synchronize|Memcpy|^cuCtxSynchronize|^cuStreamSynchronize|^cuEventSynchronize")

# ops whose `Input type` tells whether they sync (boolean masks, one-argument where)
SHAPE_OPS = {"aten::index", "aten::index_put_", "aten::_index_put_impl_", "aten::where"}


def _open_text(path: str):
    if not os.path.exists(path):
        raise UserError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UserError(f"{path}: is a folder, not a trace file")
    try:
        with open(path, "rb") as f:
            magic = f.read(2)
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.GzipFile(path, "rb"), encoding="utf-8")
    return open(path, encoding="utf-8")


class _JsonStream:
    """Incremental access to one JSON document, one value at a time, over a text stream."""

    def __init__(self, f, path: str, chunk: int | None = None):
        self.f = f
        self.path = path
        self.chunk = chunk or CHUNK_CHARS
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.scan = json.JSONDecoder().scan_once

    def more(self, want: int = 0) -> bool:
        """Append the next chunk to the buffer (dropping what was consumed)."""
        if self.eof:
            return False
        data = self.f.read(max(self.chunk, want))
        if not data:
            self.eof = True
            return False
        self.buf = self.buf[self.pos:] + data
        self.pos = 0
        return True

    def peek(self, pattern=_WS) -> str:
        """Skip whitespace (or whitespace and commas) and return the next character ('' at EOF)."""
        while True:
            self.pos = pattern.match(self.buf, self.pos).end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, char: str, what: str) -> None:
        c = self.peek()
        if c != char:
            raise self.error(f"expected {what}")
        self.pos += 1

    def value(self) -> Any:
        self.peek()  # the scanner does not skip leading whitespace
        want = 0
        while True:
            try:
                obj, end = self.scan(self.buf, self.pos)
            except (StopIteration, ValueError):
                # an incomplete value at the end of the buffer: read on (growing, so a huge
                # header value costs O(n log n), not O(n^2)); at EOF the file is cut or bad
                want = max(self.chunk, 2 * want, len(self.buf) - self.pos)
                if self.more(want):
                    continue
                raise self.error("truncated or invalid JSON") from None
            if end >= len(self.buf) and not isinstance(obj, (dict, list, str)) and self.more():
                continue  # a number or literal may go on in the next chunk
            self.pos = end
            return obj

    def error(self, what: str) -> UserError:
        return UserError(f"{self.path}: not a torch.profiler trace ({what})")


def read_trace(path: str, on_event: Callable[[dict], None]) -> dict:
    """Stream `path`, calling on_event for each element of traceEvents; return the header keys."""
    path = str(path)
    meta: dict = {}
    try:
        with _open_text(path) as f:
            js = _JsonStream(f, path)
            first = js.peek()
            if first == "":
                raise UserError(f"{path}: empty file, not a torch.profiler trace")
            if first == "[":  # the bare-array form of the Chrome trace format
                _read_events(js, on_event)
                meta["_events_seen"] = True
            elif first == "{":
                js.pos += 1
                while True:
                    c = js.peek(_WS_COMMA)
                    if c == "}":
                        break
                    if c != '"':
                        raise js.error("expected a key" if c else "truncated JSON")
                    key = js.value()
                    js.expect(":", "':'")
                    if key == "traceEvents":
                        if js.peek() != "[":
                            raise js.error("traceEvents is not a list")
                        _read_events(js, on_event)
                        meta["_events_seen"] = True
                    else:
                        val = js.value()
                        if key in META_KEYS:
                            meta[key] = val
            else:
                raise UserError(f"{path}: not JSON (a torch.profiler trace is a JSON object)")
    except UserError:
        raise
    except EOFError:
        raise UserError(f"{path}: truncated gzip file") from None
    except (gzip.BadGzipFile, zlib.error) as exc:
        raise UserError(f"{path}: corrupt gzip file ({exc})") from None
    except UnicodeDecodeError:
        raise UserError(f"{path}: not JSON (not UTF-8 text)") from None
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not meta.pop("_events_seen", False):
        raise UserError(f"{path}: not a torch.profiler trace (no traceEvents)")
    return meta


def _read_events(js: _JsonStream, on_event: Callable[[dict], None]) -> None:
    """Decode the traceEvents array; the hot loop of the whole analysis.

    Fast path: a raw newline only occurs between JSON tokens, never inside a string, so in a
    trace written one event per line (Kineto's layout) every "newline, spaces, {" starts an
    event. All complete events of a chunk up to the last such start are decoded by one
    json.loads of "[...]" (the C decoder's own loop). If that text does not parse, the layout
    is another one and the element-by-element scanner below does the chunk (after a few such
    misses it does all of them); when it parses, it is exactly the next events, since it starts
    at an element and every element is a complete value.
    """
    js.pos += 1  # '['
    ws = _WS_COMMA.match
    loads = json.loads
    misses = 0
    while True:
        buf, pos, scan = js.buf, js.pos, js.scan
        n = len(buf)
        pos = ws(buf, pos).end()
        if misses < 3 and pos < n and buf[pos] == "{":
            cut = _last_line_start_object(buf, pos)
            if cut > pos:
                end = len(buf[pos:cut].rstrip(" \t\r\n,")) + pos
                try:
                    batch = loads("[" + buf[pos:end] + "]")
                except ValueError:
                    misses += 1
                else:
                    for ev in batch:
                        if ev.__class__ is not dict:
                            js.pos = pos
                            raise js.error("an element of traceEvents is not an object")
                        on_event(ev)
                    pos = cut
        while True:
            pos = ws(buf, pos).end()
            if pos >= n:
                break
            if buf[pos] == "]":
                js.pos = pos + 1
                return
            try:
                ev, pos2 = scan(buf, pos)
            except (StopIteration, ValueError):
                break
            if ev.__class__ is not dict:
                js.pos = pos
                raise js.error("an element of traceEvents is not an object")
            on_event(ev)
            pos = pos2
        js.pos = pos
        if not js.more(len(js.buf) - js.pos):
            raise js.error(_why_not_parsed(js))


def _last_line_start_object(buf: str, lo: int) -> int:
    """Index of the last '{' that is the first non-blank character of a line, after lo (or -1)."""
    i = buf.rfind("\n", lo)
    while i > lo:
        j = i + 1
        while j < len(buf) and buf[j] in " \t\r":
            j += 1
        if j < len(buf) and buf[j] == "{":
            return j
        i = buf.rfind("\n", lo, i)
    return -1


def _why_not_parsed(js: _JsonStream) -> str:
    """At EOF inside traceEvents: a cut file (the error is at its very end) or bad JSON."""
    if js.peek() == "":
        return "truncated JSON: the file ends inside traceEvents"
    try:
        js.scan(js.buf, js.pos)
    except StopIteration:
        return "invalid JSON in traceEvents"
    except ValueError as exc:
        if getattr(exc, "pos", 0) >= len(js.buf.rstrip()) - 1:
            return "truncated JSON: the file ends inside traceEvents"
        return f"invalid JSON in traceEvents ({getattr(exc, 'msg', exc)})"
    return "invalid JSON in traceEvents"


def load_trace(path) -> Trace:
    """Load a Kineto trace file (.json or .json.gz, detected by content) into a compact Trace."""
    tr = Trace(path=str(path))
    names = tr.names
    ops, scopes, frames, steps, calls = tr.ops, tr.scopes, tr.frames, tr.steps, tr.calls
    memcpys, memcpy_list, cuda_syncs, devices, input_types = (
        tr.memcpys, tr.memcpy_list, tr.cuda_syncs, tr.devices, tr.input_types)
    counts: dict = {}
    name_id = names.id
    keep_call = _KEEP_CALL.search

    def host(group: dict, tid, with_ids=False) -> HostIntervals:
        iv = group.get(tid)
        if iv is None:
            iv = group[tid] = HostIntervals(with_ids)
        return iv

    def on_cpu_op(ev):
        tid = ev.get("tid")
        iv = ops.get(tid) or host(ops, tid, True)
        ts = ev["ts"]
        iv.starts.append(ts)
        iv.ends.append(ts + ev.get("dur", 0.0))
        name = ev.get("name", "")
        iv.names.append(name_id(name))
        args = ev.get("args") or {}
        ext = args.get("External id", -1)
        iv.ext.append(ext if ext.__class__ is int else -1)
        seq = args.get("Sequence number", -1)
        iv.seq.append(seq if seq.__class__ is int else -1)
        if name in SHAPE_OPS and "Input type" in args:
            input_types[(tid, ext)] = args["Input type"]

    def on_annotation(ev):
        name = ev.get("name", "")
        ts = ev["ts"]
        if name.startswith("ProfilerStep#"):
            steps.append(Step(name, ts, ts + ev.get("dur", 0.0), ev.get("tid")))
            return
        tid = ev.get("tid")
        iv = scopes.get(tid) or host(scopes, tid)
        iv.starts.append(ts)
        iv.ends.append(ts + ev.get("dur", 0.0))
        iv.names.append(name_id(name))

    def on_python(ev):
        tid = ev.get("tid")
        iv = frames.get(tid) or host(frames, tid)
        ts = ev["ts"]
        iv.starts.append(ts)
        iv.ends.append(ts + ev.get("dur", 0.0))
        iv.names.append(name_id(ev.get("name", "")))

    def on_runtime(ev):
        name = ev.get("name", "")
        if keep_call(name):
            args = ev.get("args") or {}
            ts = ev["ts"]
            calls.append(RuntimeCall(ev.get("tid"), ts, ts + ev.get("dur", 0.0), name,
                                     _int(args.get("correlation")), _int(args.get("External id"))))

    def gpu(kind):
        def on_gpu(ev):
            args = ev.get("args") or {}
            dev = args.get("device", ev.get("pid"))
            act = devices.get(dev)
            if act is None:
                act = devices[dev] = DeviceActivity(dev)
            ts = ev["ts"]
            end = ts + ev.get("dur", 0.0)
            stream = _int(args.get("stream", ev.get("tid")))
            corr = _int(args.get("correlation"))
            act.kind.append(kind)
            act.starts.append(ts)
            act.ends.append(end)
            act.streams.append(stream)
            act.corr.append(corr)
            if kind == MEMCPY:
                m = Memcpy(ev.get("name", ""), dev, stream, ts, end, corr, _int(args.get("bytes"), 0))
                memcpy_list.append(m)
                if corr >= 0:
                    memcpys[corr] = m
        return on_gpu

    def on_cuda_sync(ev):
        args = ev.get("args") or {}
        ts = ev["ts"]
        cuda_syncs[_int(args.get("correlation"))] = CudaSync(
            args.get("cuda_sync_kind", ev.get("name", "")), args.get("device", ev.get("pid")),
            _int(args.get("stream")), ts, ts + ev.get("dur", 0.0))

    handlers = {
        "cpu_op": on_cpu_op,
        "user_annotation": on_annotation,
        "python_function": on_python,
        "cuda_runtime": on_runtime,
        "cuda_driver": on_runtime,
        "kernel": gpu(KERNEL),
        "gpu_memcpy": gpu(MEMCPY),
        "gpu_memset": gpu(MEMSET),
        "cuda_sync": on_cuda_sync,
    }
    handler_get = handlers.get
    count_get = counts.get

    def on_event(ev: dict) -> None:
        cat = ev.get("cat")
        counts[cat] = count_get(cat, 0) + 1
        h = handler_get(cat)
        # every category handled is a complete ('X') event in Kineto; flows, metadata and
        # instants have other categories or none
        if h is not None and ev.get("ph") == "X":
            try:
                h(ev)
            except (KeyError, TypeError):
                counts["_malformed"] = count_get("_malformed", 0) + 1

    tr.meta = read_trace(path, on_event)
    tr.counts = counts
    if not any(c in KINETO_CATEGORIES for c in counts):
        raise UserError(f"{path}: not a torch.profiler trace (no profiler events in traceEvents)")
    tr.steps.sort(key=lambda s: s.start)
    tr.calls.sort(key=lambda c: c.start)
    tr.memcpy_list.sort(key=lambda m: m.start)
    return tr


def _int(v, default: int = -1) -> int:
    if v.__class__ is int:
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)
    return default
