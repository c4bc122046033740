"""The call graphs a run without a cache sets aside for torch.compile's reach (lint/spool.py)."""

from syncscan.lint import spool as spool_mod
from syncscan.lint.spool import GraphSpool


def test_graphs_come_back_as_they_went_in_whatever_the_order():
    spool = GraphSpool()
    graphs = {f"m{i}.py": [["::f", "f", False, "", "g", "", ""], ["::g", "g", True, "step"]] * i for i in range(5)}
    for path, rows in graphs.items():
        spool.add(path, rows)
    for path in reversed(list(graphs)):
        assert spool.get(path) == graphs[path]
    assert spool.get("other.py") is None
    spool.close()
    assert spool.get("m1.py") is None  # closed: nothing kept (those files are walked again)


def test_no_temporary_file_keeps_nothing(monkeypatch):
    def no_room(*a, **k):
        raise OSError("no space left on device")

    monkeypatch.setattr(spool_mod, "_temporary_file", no_room)
    spool = GraphSpool()
    spool.add("a.py", [["::f", "f", False, ""]])
    spool.add("b.py", [])
    assert spool.get("a.py") is None and spool.get("b.py") is None
