"""The streaming reader: reading a file in two halves gives the same trace as one pass."""

import gzip
import json
import shutil
from pathlib import Path

import pytest

from syncscan.errors import UserError
from syncscan.trace import analyze, load
from syncscan.trace.load import load_trace

TRACES = Path(__file__).resolve().parents[1].parent / "shared" / "traces"
needs_traces = pytest.mark.skipif(not TRACES.is_dir(), reason=f"recorded traces not found at {TRACES}")


def _events(n):
    out = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1,
            "ts": 0.0, "dur": 10.0 * n, "args": {"External id": 0}}]
    for i in range(n):
        out.append({"ph": "X", "cat": "cpu_op", "name": f"aten::op{i % 7}", "pid": 1, "tid": 1,
                    "ts": 10.0 * i, "dur": 5.0, "args": {"External id": i + 1, "note": "{ \u00e9 }\n"}})
        out.append({"ph": "f", "id": i, "pid": 1, "tid": 1, "ts": 10.0 * i, "cat": "ac2g", "name": "ac2g"})
    return out


def _write_lines(path, events, tail=', "traceName": "x"}'):
    """One event per line, as Kineto writes them (a header before, a key after the array)."""
    with open(path, "w", encoding="utf-8") as f:
        f.write('{"schemaVersion": 1, "traceEvents": [\n')
        f.write(",\n".join("  " + json.dumps(e, ensure_ascii=False) for e in events))
        f.write("\n]" + tail + "\n")
    return path


def test_split_is_an_event_start(tmp_path):
    path = _write_lines(tmp_path / "t.json", _events(3000))
    size = path.stat().st_size
    split = load._find_split(str(path), size)
    raw = path.read_bytes()
    assert split is not None and abs(split - size // 2) < 1000
    assert raw[split:split + 1] == b"{" and raw[:split].rstrip().endswith(b",")
    assert json.JSONDecoder().raw_decode(raw[split:].decode())[0]["ph"] in ("X", "f")


def test_no_split_in_a_one_line_file(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": _events(3000)}))
    assert load._find_split(str(path), path.stat().st_size) is None


@pytest.mark.parametrize("gz", [False, True])
def test_two_halves_give_the_same_trace(tmp_path, gz):
    path = _write_lines(tmp_path / "t.json", _events(3000))
    if gz:
        gz_path = tmp_path / "t.json.gz"
        with open(path, "rb") as src, gzip.open(gz_path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        path = gz_path
    one = load_trace(path, workers=1)
    two = load_trace(path, workers=2)
    assert two.counts == one.counts and two.meta == one.meta
    (ops1,), (ops2,) = one.ops.values(), two.ops.values()
    assert list(ops2.starts) == list(ops1.starts)
    assert [two.names[i] for i in ops2.names] == [one.names[i] for i in ops1.names]
    assert list(ops2.ext) == list(ops1.ext)


def test_second_half_read_here_when_the_helper_cannot_run(tmp_path, monkeypatch):
    path = _write_lines(tmp_path / "t.json", _events(2000))
    monkeypatch.setattr(load.sys, "executable", str(tmp_path / "no-python"))
    monkeypatch.setattr(load, "_can_split", lambda: True)
    tr = load_trace(path, workers=2)
    assert tr.counts["cpu_op"] == 2000


def test_error_in_the_second_half_is_one_line(tmp_path):
    path = _write_lines(tmp_path / "t.json", _events(3000), tail="")   # the file ends inside it
    text = path.read_text()
    path.write_text(text[: len(text) - 200])
    with pytest.raises(UserError, match="truncated"):
        load_trace(path, workers=2)


@needs_traces
def test_recorded_trace_in_two_halves_gives_the_same_report():
    path = next((TRACES / "masked_loss_v0_b16_64px").glob("*.gz"))
    assert analyze(load_trace(path, workers=2)).report == analyze(load_trace(path, workers=1)).report


# -- issue 14: events of the wrong shape ---------------------------------------------------------

def _trace_file(tmp_path, extra_events, name="t.json"):
    """A small trace with a step, two ops, a kernel; `extra_events` spliced in as JSON text."""
    good = [
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 100},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 1, "ts": 10, "dur": 5,
         "args": {"External id": 1}},
        {"ph": "X", "cat": "cpu_op", "name": "aten::mul", "pid": 1, "tid": 1, "ts": 20, "dur": 5,
         "args": {"External id": 2}},
        {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 30, "dur": 5,
         "args": {"device": 0, "stream": 7, "correlation": 3}},
    ]
    text = ",\n".join([json.dumps(e) for e in good] + list(extra_events))
    path = tmp_path / name
    path.write_text('{"schemaVersion": 1, "traceEvents": [\n' + text + "\n]}\n")
    return path


@pytest.mark.parametrize("bad", [
    '{"ph": "X", "cat": "cpu_op", "name": "aten::bad", "pid": 1, "tid": 1, "ts": 12, "dur": "5"}',
    '{"ph": "X", "cat": "cpu_op", "name": ["aten::bad"], "pid": 1, "tid": 1, "ts": 12, "dur": 1}',
    '{"ph": "X", "cat": "cpu_op", "name": "aten::bad", "pid": 1, "tid": 1, "ts": 12, "dur": 1, "args": ["x"]}',
    ('{"ph": "X", "cat": "cpu_op", "name": "aten::bad", "pid": 1, "tid": 1, "ts": 12, "dur": 1,'
     ' "args": {"External id": 99999999999999999999999}}'),
    '{"ph": "X", "cat": ["x"], "name": "aten::bad", "pid": 1, "tid": 1, "ts": 12, "dur": 1}',
    ('{"ph": "X", "cat": "kernel", "name": "k2", "pid": 0, "tid": 7, "ts": "40", "dur": "5",'
     ' "args": {"device": 0, "stream": 7}}'),
    '{"ph": "X", "cat": "user_annotation", "name": "scope", "pid": 1, "tid": 1, "ts": 1, "dur": [1]}',
])
def test_an_event_with_a_field_of_the_wrong_type_is_skipped_and_counted(tmp_path, bad):
    """The columns stay in step (a half-appended event shifted every later one) and the report
    says how many events were skipped."""
    tr = load_trace(_trace_file(tmp_path, [bad]), workers=1)
    assert tr.counts["_malformed"] == 1
    ops = tr.ops[1]
    assert len(ops.starts) == len(ops.ends) == len(ops.names) == len(ops.ext) == len(ops.seq) == 2
    assert [tr.names[i] for i in ops.names] == ["aten::add", "aten::mul"] and list(ops.ext) == [1, 2]
    (act,) = tr.devices.values()
    assert len(act.kind) == len(act.starts) == len(act.ends) == len(act.streams) == len(act.corr) == 1
    report = analyze(tr).report
    assert "1 event(s) with a field of the wrong type" in " ".join(report["notes"])


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
@pytest.mark.parametrize("field", ["ts", "dur"])
def test_nan_or_infinite_times_are_a_one_line_error(tmp_path, field, value):
    event = {"ph": "X", "cat": "cpu_op", "name": "aten::bad", "pid": 1, "tid": 1, "ts": 12, "dur": 1}
    text = json.dumps(event).replace(f'"{field}": {event[field]}', f'"{field}": {value}')
    path = _trace_file(tmp_path, [text])
    with pytest.raises(UserError, match=r"t\.json: not a valid trace: a cpu_op event on thread 1 has a NaN or "
                                        r"infinite timestamp or duration"):
        load_trace(path, workers=1)


def test_analyze_cli_with_nan_exits_2_with_one_line(tmp_path):
    import subprocess
    import sys

    nan = ('{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": NaN, "dur": 1,'
           ' "args": {"device": 0, "stream": 7}}')
    path = _trace_file(tmp_path, [nan])
    p = subprocess.run([sys.executable, "-m", "syncscan", "analyze", str(path)], capture_output=True, text=True,
                       timeout=120, check=False)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr == f"syncscan: error: {path}: not a valid trace: a GPU event on device 0 has a NaN or " \
                       "infinite timestamp or duration\n"
