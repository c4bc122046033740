"""callgraph.py: per-file summaries folded by name group and root give what `hotpath.frequencies` gives
over all the files' functions (step / epoch / once), and a project graph can take a file's summary
out again."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from syncscan.lint.callgraph import CallGraph, Summary, function_frequency, settle, summarize
from syncscan.lint.hotpath import frequencies
from syncscan.lint.result import FileResult
from syncscan.lint.rule import Finding

NAMES = ["helper", "loss_fn", "update", "step", "run_model", "prep", "forward"]  # update/step: generic
VIAS = ["", "self", "attr"]
LOCALS = ["", "", "step", "data", "epoch", "periodic", "export"]
ROOTS = ["", "", "step", "epoch"]

call = st.tuples(st.sampled_from(NAMES), st.sampled_from(VIAS), st.sampled_from(LOCALS))
function = st.fixed_dictionaries({"name": st.sampled_from(NAMES), "method": st.booleans(),
                                  "hot": st.sampled_from(ROOTS), "calls": st.lists(call, max_size=4),
                                  # a function defined in it (its own calls), called from it or wrapped
                                  "inner": st.one_of(st.none(), st.tuples(
                                      st.sampled_from(NAMES[:3]), st.sampled_from(ROOTS), st.lists(call, max_size=2),
                                      st.sampled_from(["def", "name", "wraps", "no"]), st.sampled_from(LOCALS)))})
a_file = st.lists(function, max_size=5)


def _functions(files):
    """Functions by key per file, as the engine makes them: keys unique per file, a function's nested
    function `f<i>.py::<name>.<locals>.<inner>` called by key ("def"), by its name, or as a decorator's
    wrapper (another function decorated with the outer one)."""
    out = []
    for i, fns in enumerate(files):
        d: dict[str, dict] = {}
        for j, f in enumerate(fns):
            name = f"{f['name']}{i}{j}"  # (outer names unique in the whole test: nested groups are too)
            key = f"f{i}.py::C{j}.{name}" if f["method"] else f"f{i}.py::{name}"
            calls = list(f["calls"])
            if f["inner"] is not None:
                inner, root, inner_calls, how, local = f["inner"]
                ikey = f"f{i}.py::{name}.<locals>.{inner}"
                d[ikey] = {"name": inner, "method": False, "hot": root, "calls": inner_calls}
                if how == "def":
                    calls.append((ikey, "def", local))
                elif how == "name":
                    calls.append((inner, "", local))
                elif how == "wraps" and not f["method"]:
                    d[f"f{i}.py::decorated{j}"] = {"name": f"decorated{j}", "method": False, "hot": root,
                                                   "calls": [(name, "wraps", "")]}
            d[key] = {"name": name, "method": f["method"], "hot": f["hot"], "calls": calls}
            # and the plain name, so that calls by name reach it too
            d[f"{key}_alias"] = {"name": f["name"], "method": f["method"], "hot": f["hot"], "calls": list(f["calls"])}
        out.append(d)
    return out


_RANK = {"once": 0, "epoch": 1, "step": 2}


def _rises_only(everything) -> bool:
    """The other corner: round by round, `frequencies` lets a data loop's frequency fall when its
    function's rises from once to epoch (a recursion through a nested function can do that); the
    summaries keep the highest a group reached."""
    rounds = [frequencies(everything, max_rounds=r) for r in range(1, 9)]
    return all(_RANK[b[k]] >= _RANK[a[k]] for a, b in zip(rounds, rounds[1:]) for k in a)


def _no_recursion_in_loops(everything) -> bool:
    """The corner the summaries leave out: a call in a loop from a function to its own name group."""
    for f in everything.values():
        for name, via, local in f["calls"]:
            if local in ("step", "data", "epoch") and via in ("", "self", "attr") and name == f["name"]:
                return False
    return True


@settings(max_examples=300, deadline=None)
@given(st.lists(a_file, max_size=5))
def test_summaries_settle_as_frequencies_do(files):
    files = _functions(files)
    everything = {k: v for fns in files for k, v in fns.items()}
    if not _no_recursion_in_loops(everything) or not _rises_only(everything):
        return
    expected = frequencies(everything)
    graph = CallGraph()
    for fns in files:
        graph.add(summarize(fns))
    reached = graph.reached()
    got = {k: function_frequency(k, f, reached) for k, f in everything.items()}
    assert got == expected


@settings(max_examples=200, deadline=None)
@given(st.lists(a_file, min_size=1, max_size=5), a_file)
def test_remove_undoes_add(files, replacement):
    """A project graph with one file's summary replaced equals the graph built with the new one."""
    files = _functions(files)
    graph = CallGraph()
    summaries = [summarize(fns) for fns in files]
    for s in summaries:
        graph.add(s)
    new = summarize(_functions([replacement])[0])
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


@settings(max_examples=200, deadline=None)
@given(st.lists(a_file, max_size=6))
def test_summaries_merged_as_they_arrive_reach_what_all_of_them_at_once_do(files):
    """The runner merges loose files' summaries into one graph as they arrive (one copy of each name)
    instead of holding every summary to the end: the same groups are reached."""
    summaries = [summarize(fns) for fns in _functions(files)]
    merged = CallGraph()
    for s in summaries:
        merged.add(s)
    assert merged.reached() == CallGraph().reached(summaries)


def test_summary_round_trips_and_rejects_other_shapes():
    s = summarize({"a.py::f": {"name": "f", "method": False, "hot": "step",
                               "calls": [("helper", "", ""), ("go", "attr", "periodic"), ("x", "", "export")]},
                   "a.py::g": {"name": "g", "method": False, "hot": "",
                               "calls": [("a.py::g.<locals>.h", "def", "step")]},
                   "a.py::g.<locals>.h": {"name": "h", "method": False, "hot": "", "calls": []}})
    assert s == Summary({"f:f@step": ("f:go@periodic", "f:helper@", "m:go@periodic"),
                         "f:g@": ("n:g.h@step",), "w:g@": ("n:g.h@",)})
    assert Summary.from_json(s.to_json()) == s and Summary.from_json(s.to_json()).digest() == s.digest()
    for bad in (None, [], [{}, "x"], [{"f:a@": "f:b@"}], [{"f:a@": [1]}], [{"f:a": ["f:b@"]}]):
        try:
            Summary.from_json(bad)
        except TypeError:
            continue
        raise AssertionError(f"accepted {bad!r}")
    for bad in ({}, {"edges": []}, {"edges": {"a@": {"b@": 0}}}, {"edges": {"a": {"b@": 1}}}):
        try:
            CallGraph.from_json(bad)
        except TypeError:
            continue
        raise AssertionError(f"accepted {bad!r}")


def test_epoch_and_step_flow_through_the_graph():
    """An epoch root's data loop makes its callee epoch; a step root's callee is step; what a once
    function's data loop calls is step (inference), and falls to epoch once an epoch root calls it."""
    train = {"t.py::train_one_epoch": {"name": "train_one_epoch", "method": False, "hot": "epoch",
                                       "calls": [("evaluate", "", ""), ("log_stats", "", "periodic")]}}
    ev = {"e.py::evaluate": {"name": "evaluate", "method": False, "hot": "", "calls": [("decode", "", "data")]},
          "e.py::decode": {"name": "decode", "method": False, "hot": "", "calls": []},
          "e.py::log_stats": {"name": "log_stats", "method": False, "hot": "", "calls": []}}
    alone = CallGraph()
    alone.add(summarize(ev))
    assert alone.reached() == {"f:decode": "step"}  # evaluate is once: its data loop runs per step
    g = CallGraph()
    g.add(summarize(ev))
    g.add(summarize(train))
    assert g.reached() == {"f:evaluate": "epoch", "f:decode": "epoch", "f:log_stats": "epoch"}
    assert frequencies({**ev, **train}) == {"t.py::train_one_epoch": "epoch", "e.py::evaluate": "epoch",
                                            "e.py::decode": "epoch", "e.py::log_stats": "epoch"}


def test_a_generic_method_is_reached_through_its_instances_class():
    """`logger.update(...)` (a name too generic to follow) with `logger` known to be a `Logger` reaches
    `Logger.update` and what it calls, not another class's `update`: in the summaries as in `frequencies`."""
    train = {"t.py::train": {"name": "train", "method": False, "hot": "epoch",
                             "calls": [("Logger.update", "cls", "step"), ("Meter.update", "cls", "data")]}}
    misc = {"m.py::Logger.update": {"name": "update", "method": True, "hot": "", "calls": [("fmt", "", "")]},
            "m.py::Meter.update": {"name": "update", "method": True, "hot": "", "calls": []},
            "m.py::Other.update": {"name": "update", "method": True, "hot": "", "calls": []},
            "m.py::fmt": {"name": "fmt", "method": False, "hot": "", "calls": []}}
    expected = {"t.py::train": "epoch", "m.py::Logger.update": "step", "m.py::Meter.update": "epoch",
                "m.py::Other.update": "once", "m.py::fmt": "step"}
    assert frequencies({**train, **misc}) == expected
    g = CallGraph()
    g.add(summarize(train))
    g.add(summarize(misc))
    reached = g.reached()
    assert {k: function_frequency(k, f, reached) for k, f in {**train, **misc}.items()} == expected


def test_settle_sets_contexts_and_returns_frequencies():
    r = FileResult("h.py", functions={
        "h.py::helper": {"name": "helper", "method": False, "hot": "", "calls": []},
        "h.py::other": {"name": "other", "method": False, "hot": "", "calls": []},
        "h.py::saver": {"name": "saver", "method": False, "hot": "", "calls": []}})
    r.findings = [Finding("h.py", 2, 1, 2, 5, "SYN101", "x", "m", function="h.py::helper"),
                  Finding("h.py", 5, 1, 5, 5, "SYN101", "x", "m", function="h.py::other"),
                  Finding("h.py", 6, 1, 6, 5, "SYN101", "x", "m", function="h.py::saver"),
                  Finding("h.py", 7, 1, 7, 5, "SYN101", "x", "m", function="<module>", local="step")]
    freqs = settle([r], {"f:helper": "step", "f:saver": "epoch"})
    assert freqs == {"h.py::helper": "step", "h.py::other": "once", "h.py::saver": "epoch", "<module>": "once"}
    assert [f.context for f in r.findings] == ["hot", "cold", "epoch", "hot"]



@settings(max_examples=300, deadline=None)
@given(st.lists(a_file, max_size=6))
def test_rounds_recompute_only_what_changed_and_get_every_rounds_answer(files):
    """`Rounds` (after the first round, only the groups a caller of which changed) answers as
    `reached` (every group, every round), recursion through loops included."""
    from syncscan.lint.callgraph import Rounds

    graph = CallGraph()
    for fns in _functions(files):
        graph.add(summarize(fns))
    assert Rounds([graph.edges]).reached() == graph.reached()


@settings(max_examples=400, deadline=None)
@given(st.lists(a_file, max_size=6), a_file)
def test_rounds_with_one_more_summary_answer_as_the_whole_graph_does(files, edited):
    """`Rounds.reached_with` solves only what the added summary reaches, with the rest of the
    graph's rounds kept: the same answer as solving the whole graph again (recursion included)."""
    from syncscan.lint.callgraph import Rounds

    graph = CallGraph()
    for fns in _functions(files):
        graph.add(summarize(fns))
    s = summarize({k.replace("f0.py", "edited.py"): v for k, v in _functions([edited])[0].items()})
    assert Rounds([graph.edges]).reached_with(s) == graph.reached([s])
