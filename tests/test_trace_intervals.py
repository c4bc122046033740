"""Interval unions: the primitive behind busy time, overlap, hidden copies and idle gaps."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from syncscan.trace.intervals import IntervalSet, union_length


def test_union_merges_overlapping_and_touching():
    s = IntervalSet.from_pairs([(5, 7), (0, 2), (1, 3), (3, 4), (10, 10)])
    assert list(s) == [(0, 4), (5, 7), (10, 10)]
    assert s.total() == 6


def test_union_of_nothing():
    s = IntervalSet.from_pairs([])
    assert s.total() == 0
    assert s.covered(0, 10) == 0
    assert s.uncovered(0, 10) == 10


def test_covered_and_uncovered_inside_and_across_intervals():
    s = IntervalSet.from_pairs([(0, 10), (20, 30)])
    assert s.covered(5, 25) == 10      # 5..10 and 20..25
    assert s.uncovered(5, 25) == 10    # the gap 10..20
    assert s.covered(12, 18) == 0
    assert s.covered(-5, 40) == 20
    assert s.covered(25, 25) == 0
    assert s.covered(30, 20) == 0


def test_clip():
    s = IntervalSet.from_pairs([(0, 10), (20, 30), (40, 50)])
    assert list(s.clip(5, 45)) == [(5, 10), (20, 30), (40, 45)]
    assert s.clip(11, 19).total() == 0


def test_intersection_length_is_overlap_of_two_streams():
    a = IntervalSet.from_pairs([(0, 100), (150, 250)])
    b = IntervalSet.from_pairs([(50, 200)])
    assert a.intersection_length(b) == 100
    assert b.intersection_length(a) == 100
    assert a.intersection_length(IntervalSet.from_pairs([(100, 150)])) == 0


def test_union_length_helper_and_unsorted_input():
    pairs = [(3, 4), (1, 2), (0, 1.5)]
    assert union_length(pairs) == pytest.approx(3.0)


def _brute_cover(pairs, a, b):
    """Coverage by unit cells, for integer intervals."""
    cells = set()
    for s, e in pairs:
        cells.update(range(s, e))
    return sum(1 for c in cells if a <= c < b)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 60), st.integers(0, 20)), max_size=25),
       st.integers(-5, 70), st.integers(-5, 70))
def test_coverage_matches_brute_force(raw, a, b):
    pairs = [(s, s + d) for s, d in raw]
    s = IntervalSet.from_pairs(pairs)
    assert s.total() == _brute_cover(pairs, -10, 100)
    if b >= a:
        assert s.covered(a, b) == _brute_cover(pairs, a, b)
        assert s.clip(a, b).total() == _brute_cover(pairs, a, b)


def test_intersection_matches_brute_force():
    rng = random.Random(7)
    for _ in range(100):
        pa = [(x, x + rng.randint(0, 9)) for x in (rng.randint(0, 50) for _ in range(8))]
        pb = [(x, x + rng.randint(0, 9)) for x in (rng.randint(0, 50) for _ in range(8))]
        cells_a = {c for s, e in pa for c in range(s, e)}
        cells_b = {c for s, e in pb for c in range(s, e)}
        got = IntervalSet.from_pairs(pa).intersection_length(IntervalSet.from_pairs(pb))
        assert got == len(cells_a & cells_b)
