"""Read a Kineto trace (.json or .json.gz) in one streaming pass into a compact `Trace`.

The file is read in chunks; each element of `traceEvents` is decoded on its own with the C
JSON scanner and handed to a handler for its category, which keeps a few numbers and drops
the dict. An event with a field of the wrong type (a text "dur", a list "cat") is skipped and
counted (the report says how many); a NaN or infinite time is a one-line error. Peak memory is
the compact model plus one chunk, whatever the file size. A large file is read as two byte
ranges split at an event boundary, the second by a helper process, and the two compact models
are concatenated.
"""

from __future__ import annotations

import codecs
import gzip
import json
import math
import os
import pickle
import re
import subprocess
import sys
import zlib
from array import array
from pathlib import Path
from typing import Any, Callable

from syncscan.errors import UserError
from syncscan.trace import collectives as coll
from syncscan.trace.marks import META_KEY, mark_windows
from syncscan.trace.model import (
    KERNEL,
    MEMCPY,
    MEMSET,
    Collective,
    CudaSync,
    DeviceActivity,
    HostIntervals,
    Launches,
    Memcpy,
    RuntimeCall,
    Step,
    Trace,
)

CHUNK_CHARS = 1 << 22
_MARGIN = 1 << 16
_WS = re.compile(r"[ \t\r\n]*")
_WS_COMMA = re.compile(r"[ \t\r\n,]*")

# top-level keys worth keeping (the rest of the header is skipped)
META_KEYS = {"schemaVersion", "deviceProperties", "baseTimeNanoseconds", "with_stack", "record_shapes",
             "cuda_runtime_version", "cuda_driver_version", "cupti_version", "distributedInfo",
             "traceName", "displayTimeUnit", "trace_id", META_KEY}

# categories written by torch.profiler / Kineto; a file with none of them is not a trace of ours
KINETO_CATEGORIES = {"cpu_op", "user_annotation", "python_function", "cuda_runtime", "cuda_driver",
                     "kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_user_annotation",
                     "cuda_profiler_range", "Trace", "ac2g", "fwdbwd", "overhead",
                     "runtime", "driver", "gpu_annotation"}

# CUDA runtime/driver calls: torch 2.x's names, and the names in TensorBoard-compatible copies
# (syncscan.runtime.tbcompat), which also give calls outside any op `External id` 0. GPU-side
# annotations (gpu_user_annotation, gpu_annotation there) are not read: steps are host time.
RUNTIME_CATEGORIES = {"cuda_runtime", "cuda_driver"}
COMPAT_RUNTIME_CATEGORIES = {"runtime", "driver"}

# runtime/driver calls kept: everything that can block the host or copy memory, and event
# records (syncscan profile's step marks: syncscan.trace.marks)
_KEEP_CALL = re.compile(r"Synchronize|[Mm]emcpy|EventRecord")

# ops whose `Input type` tells whether they sync (boolean masks, one-argument where)
SHAPE_OPS = {"aten::index", "aten::index_put", "aten::index_put_", "aten::_index_put_impl_", "aten::where"}


TRACE_SUFFIXES = (".pt.trace.json", ".pt.trace.json.gz")


def find_traces(folder: str | os.PathLike) -> list[Path]:
    """Trace files in a run folder, newest first (*.pt.trace.json[.gz], else any *.json[.gz])."""
    folder = Path(folder)
    files = [p for p in folder.rglob("*") if p.is_file() and p.name.endswith(TRACE_SUFFIXES)]
    if not files:
        files = [p for p in folder.iterdir() if p.is_file() and p.name.endswith((".json", ".json.gz"))]
    files.sort(key=lambda p: (p.stat().st_mtime, p.name), reverse=True)
    return files


def resolve_traces(path: str, every: bool = False) -> list[Path]:
    """A trace file as given; for a run folder its newest trace (every=True: all, newest first)."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"{path}: no such file or folder")
    if p.is_dir():
        files = find_traces(p)
        if not files:
            raise UserError(f"{path}: no torch.profiler trace (*.pt.trace.json[.gz]) in this folder")
        return files if every else files[:1]
    return [p]


def read_header(path) -> dict:
    """The top-level keys that come before traceEvents (torch writes `distributedInfo` there),
    read without the events; {} for a file that does not start like a trace (load_trace says why)."""
    path = str(path)
    meta: dict = {}
    try:
        with _ByteRangeText(path) as f:
            js = _JsonStream(f, path, chunk=1 << 16)
            if js.peek() != "{":
                return meta
            js.pos += 1
            while js.peek(_WS_COMMA) == '"':
                key = js.value()
                js.expect(":", "':'")
                if key == "traceEvents":
                    break
                val = js.value()
                if key in META_KEYS:
                    meta[key] = val
    except (UserError, OSError, EOFError, zlib.error, UnicodeDecodeError):
        return {}
    return meta


def _check_path(path: str) -> bool:
    """Raise UserError for a path that cannot be a trace file; return True when it is gzip."""
    if not os.path.exists(path):
        raise UserError(f"{path}: no such file")
    if os.path.isdir(path):
        raise UserError(f"{path}: is a folder, not a trace file")
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError as exc:
        raise UserError(f"{path}: cannot read ({exc.strerror or exc})") from None


class _ByteRangeText:
    """UTF-8 text of the bytes [start, stop) of a plain or gzip file, read in chunks."""

    def __init__(self, path: str, start: int = 0, stop: int | None = None):
        gz = _check_path(path)
        self.raw = gzip.GzipFile(path, "rb") if gz else open(path, "rb")
        if start:
            if gz:  # no seeking in a gzip stream: decompress and drop
                left = start
                while left > 0:
                    got = len(self.raw.read(min(left, 1 << 24)))
                    if not got:
                        break
                    left -= got
            else:
                self.raw.seek(start)
        self.left = None if stop is None else stop - start
        self.decoder = codecs.getincrementaldecoder("utf-8")()

    def read(self, n: int) -> str:
        while True:
            if self.left is not None:
                n = min(n, self.left)
            data = self.raw.read(n) if n > 0 else b""
            if self.left is not None:
                self.left -= len(data)
            text = self.decoder.decode(data, final=not data)
            if text or not data:
                return text

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.raw.close()


def _scanner() -> Callable[[str, int], tuple[Any, int]]:
    """The C JSON scanner: one value decoded at a position of a string, (value, end)."""
    return json.JSONDecoder().scan_once  # type: ignore[attr-defined]


class _JsonStream:
    """Incremental access to one JSON document, one value at a time, over a text stream."""

    def __init__(self, f, path: str, chunk: int | None = None):
        self.f = f
        self.path = path
        self.chunk = chunk or CHUNK_CHARS
        self.buf = ""
        self.pos = 0
        self.eof = False
        self.scan = _scanner()

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


def read_trace(path: str, on_event: Callable[[dict], None], start: int = 0, stop: int | None = None) -> dict:
    """Stream `path`, calling on_event for each element of traceEvents; return the header keys.

    With a byte range (see `_find_split`): start = 0 and a stop reads the header and the events
    before `stop`; a start > 0 must be the first byte of an element of traceEvents, and reads
    the events from there and the keys after the array.
    """
    path = str(path)
    meta: dict = {}
    try:
        with _ByteRangeText(path, start, stop) as f:
            js = _JsonStream(f, path)
            if start > 0:
                if _read_events(js, on_event, inside=True) and js.peek(_WS_COMMA) != "":
                    _read_keys(js, on_event, meta)  # keys after the array (a bare array ends here)
                meta["_events_seen"] = True
            else:
                first = js.peek()
                if first == "":
                    raise UserError(f"{path}: empty file, not a torch.profiler trace")
                if first == "[":  # the bare-array form of the Chrome trace format
                    _read_events(js, on_event, cut_ok=stop is not None)
                    meta["_events_seen"] = True
                elif first == "{":
                    js.pos += 1
                    _read_keys(js, on_event, meta, cut_ok=stop is not None)
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


def _read_keys(js: _JsonStream, on_event, meta: dict, cut_ok: bool = False) -> None:
    """The members of the top-level object, up to its '}' (or where a range stops)."""
    while True:
        c = js.peek(_WS_COMMA)
        if c == "}":
            return
        if c != '"':
            raise js.error("expected a key" if c else "truncated JSON")
        key = js.value()
        js.expect(":", "':'")
        if key == "traceEvents":
            if js.peek() != "[":
                raise js.error("traceEvents is not a list")
            meta["_events_seen"] = True
            if not _read_events(js, on_event, cut_ok=cut_ok):
                return  # the range ends inside the array
        else:
            val = js.value()
            if key in META_KEYS:
                meta[key] = val


def _read_events(js: _JsonStream, on_event: Callable[[dict], None], inside: bool = False,
                 cut_ok: bool = False) -> bool:
    """Decode the traceEvents array element by element; the hot loop of the whole analysis.

    Each element is decoded by the C scanner straight out of the chunk buffer. (Measured and
    dropped: stepping over unneeded events with a string-aware regex, and decoding whole
    chunks with one json.loads; both cost more CPU than this.)

    Returns True at the array's ']'; False when a byte range ends between two elements
    (cut_ok), which is where the next range starts. `inside`: already past the '['.
    """
    if not inside:
        js.pos += 1  # '['
    ws = _WS_COMMA.match
    while True:
        buf, pos, scan = js.buf, js.pos, js.scan
        n = len(buf)
        # refill while a margin is left: a scan that fails on an element cut by the buffer's end
        # raises a JSONDecodeError, which counts the lines of the whole buffer
        limit = n if js.eof else n - _MARGIN
        stuck = False  # True when the data in hand cannot be parsed further
        while True:
            pos = ws(buf, pos).end()  # type: ignore[union-attr]  # the pattern matches the empty string
            if pos >= limit:
                stuck = pos >= n
                break
            if buf[pos] == "]":
                js.pos = pos + 1
                return True
            try:
                ev, pos2 = scan(buf, pos)
            except (StopIteration, ValueError):
                stuck = True
                break
            if ev.__class__ is not dict:
                js.pos = pos
                raise js.error("an element of traceEvents is not an object")
            on_event(ev)
            pos = pos2
        js.pos = pos
        if not js.more(len(js.buf) - js.pos) and stuck:
            if cut_ok and js.pos >= len(js.buf):
                return False
            raise js.error(_why_not_parsed(js))


def _why_not_parsed(js: _JsonStream) -> str:
    """At EOF inside traceEvents: a cut file (the error is at its very end) or bad JSON."""
    if js.peek() == "":
        return "truncated JSON: the file ends inside traceEvents"
    try:
        js.scan(js.buf, js.pos)
    except StopIteration:
        return "invalid JSON in traceEvents"
    except ValueError as exc:
        at_end = getattr(exc, "pos", 0) >= len(js.buf.rstrip()) - 1
        if at_end or getattr(exc, "msg", "").startswith("Unterminated string"):
            return "truncated JSON: the file ends inside traceEvents"
        return f"invalid JSON in traceEvents ({getattr(exc, 'msg', exc)})"
    return "invalid JSON in traceEvents"


# files above this size (uncompressed) are read by two processes, one half each
PARALLEL_MIN_BYTES = 48 << 20


def load_trace(path, *, workers: int | None = None) -> Trace:
    """Load a Kineto trace file (.json or .json.gz, detected by content) into a compact Trace.

    A large file is split at an event boundary near its middle and the second half is read by a
    fresh Python process while this one reads the first (workers=1 forces one process). The
    helper is a new interpreter, not a fork, so it is safe inside a process that runs torch and
    its threads; if it cannot run, this process reads the second half too.
    """
    path = str(path)
    gz = _check_path(path)
    split = None
    if workers != 1:
        size = _content_size(path, gz)
        if size >= (PARALLEL_MIN_BYTES if workers is None else 1) and _can_split():
            split = _find_split(path, size)
    if split is None:
        tr = _load_range(path, 0, None)
    else:
        tr = _load_split(path, split)
    if not any(c in KINETO_CATEGORIES for c in tr.counts):
        raise UserError(f"{path}: not a torch.profiler trace (no profiler events in traceEvents)")
    check_finite(tr)
    tr.steps.sort(key=lambda s: s.start)
    tr.calls.sort(key=lambda c: c.start)
    tr.memcpy_list.sort(key=lambda m: m.start)
    tr.collectives.sort(key=lambda c: c.start)
    if not tr.steps:  # a trace of CUDA activity only: syncscan profile's step marks, if it has them
        tr.steps = mark_windows(tr)
    return tr


def _can_split() -> bool:
    return (os.cpu_count() or 1) > 1 and bool(sys.executable)


def _content_size(path: str, gz: bool) -> int:
    """Uncompressed size: the file's, or a gzip's ISIZE trailer (mod 2**32; a guess only)."""
    size = os.path.getsize(path)
    if not gz:
        return size
    with open(path, "rb") as f:
        f.seek(max(size - 4, 0))
        return int.from_bytes(f.read(4), "little")


def _find_split(path: str, size: int, window: int = 1 << 20) -> int | None:
    """A byte offset near the middle where an element of traceEvents starts, or None.

    A raw newline is always outside JSON strings, so "newline, blanks, {" starts an object. It
    is taken when the object decodes to a dict with "ph" (an event: the nested args objects
    have none) and the text before it, past blanks, is the comma of the array.
    """
    try:
        with _ByteRangeText(path, size // 2) as f:
            head = f.raw.read(window)
    except (OSError, EOFError, zlib.error):
        return None
    scan = _scanner()
    base = size // 2
    i = head.find(b"\n")
    tries = 0
    while 0 <= i and tries < 200:
        tries += 1
        j = i + 1
        while j < len(head) and head[j] in b" \t\r":
            j += 1
        if j < len(head) and head[j:j + 1] == b"{":
            before = head[:i].rstrip(b" \t\r\n")
            if before.endswith(b","):
                text = head[j:].decode("utf-8", "ignore")
                try:
                    obj, end = scan(text, 0)
                except (StopIteration, ValueError):
                    obj = None
                if isinstance(obj, dict) and "ph" in obj and text[end:].lstrip(" \t\r\n")[:1] in (",", "]"):
                    return base + j
        i = head.find(b"\n", i + 1)
    return None


_WORKER = ("import sys; from syncscan.trace.load import _load_worker; "
           "_load_worker(sys.argv[1], int(sys.argv[2]))")


def _load_split(path: str, split: int) -> Trace:
    try:
        proc = subprocess.Popen([sys.executable, "-c", _WORKER, path, str(split)],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except OSError:
        proc = None
    try:
        first = _load_range(path, 0, split)
        result = None
        if proc is not None and proc.stdout is not None:
            data = proc.stdout.read()
            proc.wait()
            try:
                result = pickle.loads(data) if proc.returncode == 0 else None
            except Exception:  # a helper that died mid-write: read the half here instead
                result = None
    finally:
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stdout is not None:
                proc.stdout.close()
    if result is None:
        second = _load_range(path, split, None)
    elif result[0]:
        second = result[1]
    else:
        raise UserError(result[1])
    return _merge(first, second)


def _load_worker(path: str, start: int) -> None:
    """Entry point of the helper process: pickle (ok, Trace or error line) to stdout."""
    result: tuple[bool, Trace | str]
    try:
        result = (True, _load_range(path, start, None))
    except UserError as exc:
        result = (False, str(exc))
    sys.stdout.buffer.write(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
    sys.stdout.flush()


def _merge(a: Trace, b: Trace) -> Trace:
    """a + b, b read after a: concatenate b's columns onto a's, remapping its interned names."""
    remap = [a.names.id(n) for n in b.names.names]
    for group in ("ops", "scopes", "frames"):
        ga, gb = getattr(a, group), getattr(b, group)
        for tid, ivb in gb.items():
            ivb.names = array("i", map(remap.__getitem__, ivb.names))
            iva = ga.get(tid)
            if iva is None:
                ga[tid] = ivb
                continue
            iva.starts.extend(ivb.starts)
            iva.ends.extend(ivb.ends)
            iva.names.extend(ivb.names)
            if iva.has_ids:
                iva.ext.extend(ivb.ext)
                iva.seq.extend(ivb.seq)
    for dev, actb in b.devices.items():
        acta = a.devices.get(dev)
        if acta is None:
            a.devices[dev] = actb
            continue
        for col in ("kind", "starts", "ends", "streams", "corr"):
            getattr(acta, col).extend(getattr(actb, col))
    for tid, lb in b.launches.items():
        lb.names = array("i", map(remap.__getitem__, lb.names))
        la = a.launches.get(tid)
        if la is None:
            a.launches[tid] = lb
        else:
            la.starts.extend(lb.starts)
            la.ends.extend(lb.ends)
            la.names.extend(lb.names)
            la.corr.extend(lb.corr)
    a.steps.extend(b.steps)
    a.calls.extend(b.calls)
    a.memcpy_list.extend(b.memcpy_list)
    a.memcpys.update(b.memcpys)
    a.cuda_syncs.update(b.cuda_syncs)
    a.input_types.update(b.input_types)
    a.collectives.extend(b.collectives)
    for k, v in b.counts.items():
        a.counts[k] = a.counts.get(k, 0) + v
    for k, v in b.meta.items():
        a.meta.setdefault(k, v)
    return a


def _load_range(path: str, start: int, stop: int | None) -> Trace:
    """The compact Trace of the events in a byte range of the file (the whole file by default)."""
    tr = Trace(path=str(path))
    names = tr.names
    ops, scopes, frames, steps, calls, launches = tr.ops, tr.scopes, tr.frames, tr.steps, tr.calls, tr.launches
    memcpys, memcpy_list, cuda_syncs, devices, input_types = (
        tr.memcpys, tr.memcpy_list, tr.cuda_syncs, tr.devices, tr.input_types)
    counts: dict = {}
    name_id = names.id
    keep_call = _KEEP_CALL.search

    # per thread / device, the bound append methods of its columns: the handlers run once per
    # event (millions), so they avoid attribute look-ups and interning calls where they can
    name_ids = names._ids
    op_sinks: dict = {}
    scope_sinks: dict = {}
    frame_sinks: dict = {}

    def sinks(group: dict, cache: dict, tid, with_ids: bool) -> tuple[Callable[[Any], None], ...]:
        iv = group[tid] = HostIntervals(with_ids)
        cols: tuple[Callable[[Any], None], ...] = (iv.starts.append, iv.ends.append, iv.names.append)
        if with_ids:
            cols += (iv.ext.append, iv.seq.append)
        cache[tid] = cols
        return cols

    def on_cpu_op(ev):
        tid = ev.get("tid")
        cols = op_sinks.get(tid)
        if cols is None:
            cols = sinks(ops, op_sinks, tid, True)
        add_start, add_end, add_name, add_ext, add_seq = cols
        ts = ev["ts"]
        add_start(ts)
        add_end(ts + ev.get("dur", 0.0))
        name = ev.get("name", "")
        nid = name_ids.get(name)
        add_name(nid if nid is not None else name_id(name))
        args = ev.get("args") or {}
        ext = args.get("External id", -1)
        add_ext(ext if ext.__class__ is int else -1)
        seq = args.get("Sequence number", -1)
        add_seq(seq if seq.__class__ is int else -1)
        if name in SHAPE_OPS and "Input type" in args:
            input_types[(tid, ext)] = args["Input type"]

    collectives = tr.collectives

    def on_annotation(ev):
        name = ev.get("name", "")
        ts = ev["ts"]
        if name.startswith("ProfilerStep#"):
            steps.append(Step(name, ts, ts + ev.get("dur", 0.0), ev.get("tid")))
            return
        if name.startswith(coll.GLOO_PREFIX):  # gloo runs its collectives on host threads
            collectives.append(Collective(coll.from_annotation(name) or name, "host", ev.get("tid"), ts,
                                          ts + ev.get("dur", 0.0)))
        tid = ev.get("tid")
        cols = scope_sinks.get(tid)
        if cols is None:
            cols = sinks(scopes, scope_sinks, tid, False)
        cols[0](ts)
        cols[1](ts + ev.get("dur", 0.0))
        cols[2](name_id(name))

    def on_python(ev):
        tid = ev.get("tid")
        cols = frame_sinks.get(tid)
        if cols is None:
            cols = sinks(frames, frame_sinks, tid, False)
        add_start, add_end, add_name = cols
        ts = ev["ts"]
        add_start(ts)
        add_end(ts + ev.get("dur", 0.0))
        name = ev.get("name", "")
        nid = name_ids.get(name)
        add_name(nid if nid is not None else name_id(name))

    launch_sinks: dict = {}

    def on_runtime(ev, zero_is_none=False):
        args = ev.get("args") or {}
        tid = ev.get("tid")
        ts = ev["ts"]
        corr = args.get("correlation", -1)
        if corr.__class__ is not int:
            corr = _int(corr)
        name = ev.get("name", "")
        if corr >= 0:  # every call that may launch GPU work: see Trace.launches
            cols = launch_sinks.get(tid)
            if cols is None:
                lc = launches[tid] = Launches()
                cols = launch_sinks[tid] = (lc.starts.append, lc.ends.append, lc.names.append, lc.corr.append)
            cols[0](ts)
            cols[1](ts + ev.get("dur", 0.0))
            nid = name_ids.get(name)
            cols[2](nid if nid is not None else name_id(name))
            cols[3](corr)
        if keep_call(name):
            ext = _int(args.get("External id"))
            if zero_is_none and ext == 0:  # the compatible copy's filler for "no op"
                ext = -1
            calls.append(RuntimeCall(tid, ts, ts + ev.get("dur", 0.0), name, corr, ext))

    def on_compat_runtime(ev):
        on_runtime(ev, True)

    gpu_sinks: dict = {}

    def gpu(kind):
        def on_gpu(ev):
            args = ev.get("args") or {}
            dev = args.get("device", ev.get("pid"))
            cols = gpu_sinks.get(dev)
            if cols is None:
                act = devices[dev] = DeviceActivity(dev)
                cols = gpu_sinks[dev] = (act.kind.append, act.starts.append, act.ends.append,
                                         act.streams.append, act.corr.append)
            ts = ev["ts"]
            end = ts + ev.get("dur", 0.0)
            stream = args.get("stream")
            if stream.__class__ is not int:
                stream = _int(ev.get("tid") if stream is None else stream)
            corr = args.get("correlation", -1)
            if corr.__class__ is not int:
                corr = _int(corr)
            cols[0](kind)
            cols[1](ts)
            cols[2](end)
            cols[3](stream)
            cols[4](corr)
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

    on_plain_kernel = gpu(KERNEL)

    def on_kernel(ev):
        on_plain_kernel(ev)
        name = ev.get("name", "")
        # a collective: kept with its name, which other kernels lose
        if name.__class__ is str and name.startswith("nccl"):
            args = ev.get("args") or {}
            group = args.get("Process Group Name")
            ts = ev["ts"]
            lane = (args.get("device", ev.get("pid")), _int(args.get("stream")))
            collectives.append(Collective(coll.from_kernel(name, args) or name, "gpu", lane, ts,
                                          ts + ev.get("dur", 0.0), group if isinstance(group, str) else ""))

    handlers: dict[Any, Callable[[dict], None]] = {
        "cpu_op": on_cpu_op,
        "user_annotation": on_annotation,
        "python_function": on_python,
        **dict.fromkeys(RUNTIME_CATEGORIES, on_runtime),
        **dict.fromkeys(COMPAT_RUNTIME_CATEGORIES, on_compat_runtime),
        "kernel": on_kernel,
        "gpu_memcpy": gpu(MEMCPY),
        "gpu_memset": gpu(MEMSET),
        "cuda_sync": on_cuda_sync,
    }
    handler_get = handlers.get
    count_get = counts.get

    def on_event(ev: dict) -> None:
        cat = ev.get("cat")
        try:
            h = handler_get(cat)
            counts[cat] = count_get(cat, 0) + 1
        except TypeError:  # an unhashable "cat" (a list): no category of ours
            counts["_malformed"] = count_get("_malformed", 0) + 1
            return
        # every category handled is a complete ('X') event in Kineto; flows, metadata and
        # instants have other categories or none
        if h is not None and ev.get("ph") == "X":
            try:
                h(ev)
            except (KeyError, TypeError, ValueError, AttributeError, OverflowError):
                # a field of the wrong type ("dur": "5", "args": []): the event is skipped, and
                # the columns it had been appended to are cut back to keep them in step
                counts["_malformed"] = count_get("_malformed", 0) + 1
                _realign(tr)

    tr.meta = read_trace(path, on_event, start, stop)
    tr.counts = counts
    return tr


def _realign(tr: Trace) -> None:
    """Cut every group of parallel columns back to its shortest column. Before an event all
    the columns of a group have one length; a handler that fails part-way through its appends
    leaves some one longer: this drops that half-appended event."""
    groups = [[iv.starts, iv.ends, iv.names] + ([iv.ext, iv.seq] if iv.ext is not None else [])
              for g in (tr.ops, tr.scopes, tr.frames) for iv in g.values()]
    groups += [[a.kind, a.starts, a.ends, a.streams, a.corr] for a in tr.devices.values()]
    groups += [[lc.starts, lc.ends, lc.names, lc.corr] for lc in tr.launches.values()]
    for cols in groups:
        n = min(len(c) for c in cols)
        for c in cols:
            del c[n:]


def check_finite(tr: Trace) -> None:
    """A one-line error for a trace with a NaN or infinite time (JSON's NaN and Infinity, which
    Python's reader accepts): every duration and gap computed from it would be nonsense."""
    columns = [(f"a {kind} event on thread {tid}", col)
               for kind, group in (("cpu_op", tr.ops), ("annotation", tr.scopes), ("python_function", tr.frames))
               for tid, iv in group.items() for col in (iv.starts, iv.ends)]
    columns += [(f"a GPU event on device {dev}", col) for dev, a in tr.devices.items() for col in (a.starts, a.ends)]
    columns += [(f"a CUDA runtime call on thread {tid}", lc.starts) for tid, lc in tr.launches.items()]
    columns += [("a step marker", [t for s in tr.steps for t in (s.start, s.end)]),
                ("a CUDA runtime call", [t for c in tr.calls for t in (c.start, c.end)]),
                ("a cuda_sync event", [t for c in tr.cuda_syncs.values() for t in (c.start, c.end)]),
                ("a collective", [t for c in tr.collectives for t in (c.start, c.end)])]
    for what, col in columns:
        if not math.isfinite(sum(col)) and not all(map(math.isfinite, col)):
            raise UserError(f"{tr.path}: not a valid trace: {what} has a NaN or infinite timestamp or duration")


def _int(v, default: int = -1) -> int:
    if v.__class__ is int:
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)
    return default
