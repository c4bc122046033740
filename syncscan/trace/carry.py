"""Carry source lines from one pass's analysis to another's: `SourcePattern`.

`syncscan profile` times the steps in a light pass, whose trace has no Python stacks, and finds
the lines in a detailed pass (stacks and run-time hooks). Both run the same training step, so
the syncs of a step come in the same order in both: the k-th sync of a given kind (its rule, ops
and scope) in a light step is the k-th sync of that kind in a detailed step. The pattern learns,
for each kind and each position in the step, the source line the detailed pass found most
often, and gives it to the light pass's syncs before they are grouped into sites. Two syncs of
one kind from two lines (`loss.item()` and the `found_inf` read inside `scaler.step()`) stay two
sites, each at its own line.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Mapping, Optional, Sequence

# what a trace without stacks knows about a sync: the key that pairs it with the other pass
KEY_FIELDS = ("rule", "op", "outer_op", "forward_op", "phase", "scope")
# what the pattern carries: where the sync comes from
SOURCE_FIELDS = ("file", "line", "function", "line_kind", "stack", "frames")


def item_key(item: Any) -> tuple:
    """The key of a sync event or would-sync item (it must be attributed)."""
    att = item.att
    return (item.rule, att.op, att.outer_op, att.forward_op, att.phase, att.scope)


def site_key(site: dict) -> tuple:
    return tuple(site.get(k) for k in KEY_FIELDS)


@dataclass
class SourcePattern:
    """For each kind of sync, the source of its k-th occurrence in a step (k = 0, 1, ...)."""

    by_position: dict[tuple, list[dict]] = field(default_factory=dict)
    overall: dict[tuple, dict] = field(default_factory=dict)  # the most frequent source of the kind

    @classmethod
    def learn(cls, items: Sequence[Any], item_site: Sequence[int],
              sites: Sequence[Mapping[str, Any]]) -> "SourcePattern":
        """From an analysis: its items (events, or would-sync items) in time order, the index of
        each item's site, and the sites (with their source fields)."""
        per_window: dict[int, dict[tuple, list[int]]] = {}
        for it, s in zip(items, item_site):
            if it.att is None or s is None or not sites[s].get("file"):
                continue
            per_window.setdefault(it.window, {}).setdefault(item_key(it), []).append(s)
        positions: dict[tuple, list[Counter]] = {}
        totals: dict[tuple, Counter] = {}
        for by_key in per_window.values():
            for key, seq in by_key.items():
                slots = positions.setdefault(key, [])
                for k, s in enumerate(seq):
                    if k == len(slots):
                        slots.append(Counter())
                    slots[k][s] += 1
                    totals.setdefault(key, Counter())[s] += 1

        def source(s: int) -> dict:
            return {f: sites[s].get(f) for f in SOURCE_FIELDS if sites[s].get(f) is not None}

        return cls({key: [source(c.most_common(1)[0][0]) for c in slots] for key, slots in positions.items()},
                   {key: source(c.most_common(1)[0][0]) for key, c in totals.items()})

    def __bool__(self) -> bool:
        return bool(self.overall)

    def source_for(self, key: tuple, position: int) -> Optional[dict]:
        slots = self.by_position.get(key)
        if slots and position < len(slots):
            return slots[position]
        return self.overall.get(key)

    def apply(self, items: Sequence[Any]) -> int:
        """Give each item (in time order) without a source of its own the source of its kind and
        position in its step; returns how many got one."""
        seen: dict[tuple, int] = {}
        given = 0
        for it in items:
            if it.att is None:
                continue
            key = (it.window, *item_key(it))
            k = seen.get(key, 0)
            seen[key] = k + 1
            if it.site is not None:
                continue
            src = self.source_for(key[1:], k)
            if src is not None:
                it.site = {**src, "carried": True}
                given += 1
        return given
