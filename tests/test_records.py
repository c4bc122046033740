"""The records a warm lint handles (lint/records.py) behave as the dataclasses they replaced:
defaults, equality, repr, replace, frozen ones immutable and hashable, pickling (workers). And a
source read without tokenize is decoded as tokenize would have it."""

from __future__ import annotations

import copy
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from syncscan.lint.config import Config, Overrides
from syncscan.lint.files import Source, Stdin
from syncscan.lint.result import FileResult
from syncscan.lint.rule import Edit, Finding, Fix


def finding(**kw) -> Finding:
    return Finding("a.py", 3, 1, 3, 9, "SYN101", "item", "m", **kw)


def test_defaults_are_fresh_per_record():
    a, b = finding(), finding()
    a.extra["k"] = 1
    assert b.extra == {} and (a.context, a.confidence, a.fix, a.cell) == ("cold", "high", None, None)
    c, d = Config(), Config()
    c.select.append("X")
    assert d.select == ["SYN"] and d.respect_gitignore and not d.show_cold
    assert FileResult("p").findings is not FileResult("p").findings


def test_equality_field_by_field_and_replace():
    assert finding() == finding() and finding() != finding(context="hot") and finding() != "a.py"
    moved = finding().replace(line=7, end_line=7)
    assert (moved.line, moved.end_line, moved.code) == (7, 7, "SYN101")
    with pytest.raises(TypeError):
        finding().replace(lines=2)
    cfg = Overrides(select=("SYN1",), extend_select=("SYN3",)).apply(Config(ignore=["SYN2"]))
    assert (cfg.select, cfg.ignore) == (["SYN1", "SYN3"], ["SYN2"])


def test_frozen_records_are_immutable_and_hashable():
    e = Edit(1, 2, 1, 5, "x")
    fix = Fix("safe", (e,), covers=((1, 2),))
    for rec, name in ((e, "line"), (fix, "group"), (Stdin("t"), "name"), (Overrides(), "select")):
        with pytest.raises(AttributeError):
            setattr(rec, name, None)
    assert {fix: 1}[Fix("safe", (Edit(1, 2, 1, 5, "x"),), covers=((1, 2),))] == 1
    with pytest.raises(TypeError):
        hash(finding())  # (mutable: unhashable, as a dataclass with eq)


def test_repr_as_a_dataclass_writes_it():
    assert repr(Edit(1, 2, 1, 5, "x")) == "Edit(line=1, column=2, end_line=1, end_column=5, content='x')"
    assert "source_spans" not in repr(Source("a.py", "t"))  # (field(repr=False) before)


@pytest.mark.parametrize("rec", [finding(fix=Fix("unsafe", (Edit(1, 1, 1, 2, "y"),))), FileResult("p", [finding()]),
                                 Source("a.py", "x = 1\n"), Config(hot_functions=["step*"])])
def test_copies_and_pickles_equal(rec):
    assert pickle.loads(pickle.dumps(rec)) == rec and copy.deepcopy(rec) == rec and copy.copy(rec) == rec


# -- reading a source without tokenize (files._decode): what tokenize.detect_encoding decides -----

def _tokenize_says(data: bytes):
    """What tokenize.detect_encoding (the spec) makes of a file: (text, encoding), or None when
    it cannot be decoded."""
    import io
    import tokenize

    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        text = data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return None
    return (text[1:], "utf-8-sig") if text.startswith("\ufeff") else (text, encoding)


def _decoded(data: bytes):
    from syncscan.lint.files import ReadError, _decode

    try:
        return _decode(data)
    except ReadError as e:
        return str(e)


LINES = [b"x = 1", b"# -*- coding: latin-1 -*-", b"# coding=utf-8", b"# vim: set fileencoding=cp1252 :",
         b"#!/usr/bin/env python", b"", b"s = '\xe9'", b"s = '\xc3\xa9'", b"# coding: nonsense", b"\xef\xbb\xbf",
         b"\xef\xbb\xbf# coding: latin-1", b"y = 2\r", b"\x00", b"coding = 3", b"   # coding: utf-8"]


@settings(max_examples=600, deadline=None)
@given(st.lists(st.sampled_from(LINES), max_size=5), st.sampled_from([b"\n", b"\r\n", b"\r"]))
def test_decode_decides_as_tokenize(lines, end):
    data = end.join(lines)
    if b"\0" in data:
        assert _decoded(data) == "binary file, not Python source"
    else:
        assert _decoded(data) == (_tokenize_says(data) or "not valid UTF-8 (or its declared encoding)")
