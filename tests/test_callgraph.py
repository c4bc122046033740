"""callgraph.py: per-file summaries folded by name give exactly what `hotpath.resolve_hot` gives over
all the files' functions, and a project graph can take a file's summary out again."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from syncscan.lint.callgraph import CallGraph, Summary, group, settle, summarize
from syncscan.lint.engine import FileResult
from syncscan.lint.hotpath import resolve_hot
from syncscan.lint.rule import Finding

NAMES = ["helper", "loss_fn", "update", "step", "run_model", "prep", "forward"]  # update/step: generic
VIAS = ["", "self", "attr"]

call = st.tuples(st.sampled_from(NAMES), st.sampled_from(VIAS))
function = st.fixed_dictionaries({"name": st.sampled_from(NAMES), "method": st.booleans(), "hot": st.booleans(),
                                  "calls": st.lists(call, max_size=4)})
a_file = st.tuples(st.lists(function, max_size=5), st.lists(call, max_size=2))


def _functions(files):
    """[(functions by key, seeds)] with keys unique per file, as the engine makes them."""
    out = []
    for i, (fns, seeds) in enumerate(files):
        out.append(({f"f{i}.py::{j}.{f['name']}": f for j, f in enumerate(fns)}, seeds))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(a_file, max_size=5))
def test_summaries_settle_as_resolve_hot_does(files):
    files = _functions(files)
    everything = {k: v for fns, _ in files for k, v in fns.items()}
    expected = resolve_hot(everything, [s for _, s in files for s in s])
    graph = CallGraph()
    for fns, seeds in files:
        graph.add(summarize(fns, seeds))
    reached = graph.reached()
    got = {k for k, f in everything.items() if f["hot"] or group(f["name"], f["method"]) in reached}
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(a_file, min_size=1, max_size=5), a_file)
def test_remove_undoes_add(files, replacement):
    """A project graph with one file's summary replaced equals the graph built with the new one."""
    files = _functions(files)
    graph = CallGraph()
    summaries = [summarize(fns, seeds) for fns, seeds in files]
    for s in summaries:
        graph.add(s)
    new = summarize(*_functions([replacement])[0])
    graph.remove(summaries[0])
    graph.add(new)
    fresh = CallGraph()
    for s in [new] + summaries[1:]:
        fresh.add(s)
    assert graph.to_json() == fresh.to_json()
    assert graph.reached() == fresh.reached()
    # and `reached(extra)` answers for a summary added for one question only
    fresh.remove(new)
    assert fresh.reached([new]) == graph.reached()


def test_summary_round_trips_and_rejects_other_shapes():
    s = summarize({"a.py::f": {"name": "f", "method": False, "hot": True, "calls": [("helper", ""), ("go", "attr")]}},
                  [("loop_body", "")])
    assert s == Summary({"f:f": ("f:go", "f:helper", "m:go")}, ("f:go", "f:helper", "f:loop_body", "m:go"))
    assert Summary.from_json(s.to_json()) == s and Summary.from_json(s.to_json()).digest() == s.digest()
    for bad in (None, [], [{}, "x"], [{"f:a": "f:b"}, []], [{"f:a": [1]}, []], [{}, [2]]):
        try:
            Summary.from_json(bad)
        except TypeError:
            continue
        raise AssertionError(f"accepted {bad!r}")
    for bad in ({}, {"edges": [], "roots": {}}, {"edges": {"a": {"b": 0}}, "roots": {}}, {"edges": {}, "roots": {"a": "1"}}):
        try:
            CallGraph.from_json(bad)
        except TypeError:
            continue
        raise AssertionError(f"accepted {bad!r}")


def test_settle_marks_findings_and_returns_hot_keys():
    r = FileResult("h.py", functions={"h.py::helper": {"name": "helper", "method": False, "hot": False, "calls": []},
                                      "h.py::other": {"name": "other", "method": False, "hot": False, "calls": []}})
    r.findings = [Finding("h.py", 2, 1, 2, 5, "SYN101", "x", "m", function="h.py::helper"),
                  Finding("h.py", 5, 1, 5, 5, "SYN101", "x", "m", function="h.py::other"),
                  Finding("h.py", 7, 1, 7, 5, "SYN101", "x", "m", function="<module>", local_hot=True)]
    assert settle([r], frozenset({"f:helper"})) == {"h.py::helper"}
    assert [f.context for f in r.findings] == ["hot", "cold", "hot"]
