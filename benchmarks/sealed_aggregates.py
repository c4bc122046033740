"""What a sealed set's misses have in common, as counts only: never a path, a line or a name of its code.

A sealed set (fresh5, fresh9, fresh10, fresh11, fresh12, fresh13, fresh14, fresh15, fresh16, fresh17, fresh18,
fresh20, fresh21, fresh22, fresh23, fresh24, fresh25, fresh26, fresh27, fresh28, fresh29, fresh30, fresh31,
fresh32, fresh33, fresh34, fresh35, fresh36, fresh37, fresh38, fresh39, fresh40,
fresh41, fresh42, fresh43) is scored for
totals; its misses are not listed, so that it keeps telling how the linter does on code nobody here has read. Counts
over its misses still point at semantics the linter lacks, without showing one library's idioms (session 13, docs/accuracy.md): per expected
rule, per recorded op description (`Tensor.__getitem__ [index: tuple of int]`), and, for the sites whose op the recorder could not name (`?`), the
nearest torch frame. Reading them makes the set a little less blind: say so where a change came from them.

    python benchmarks/sealed_aggregates.py --set fresh10 [--linter REV]
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import accuracy as A  # noqa: E402


def aggregates(rows: list[dict]) -> dict[str, Counter]:
    """Counts over the missed direct sites of measured rows (accuracy.measure's `rows`)."""
    missed = [r for r in rows if r["category"] == "direct" and not r["found"]]
    per_rule = Counter(r["expected"] for r in missed)
    per_op = Counter((r["expected"], " + ".join(sorted(r["site"].get("ops") or {"?": 0}))) for r in missed)
    frames = Counter(" < ".join(f.rsplit(":", 1)[-1] for f in (r["site"].get("torch_frames") or [])[:2]) or "(none)"
                     for r in missed if r["expected"].startswith("no rule (?"))
    return {"rule": per_rule, "op": per_op, "unnamed op, nearest torch frames": frames}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--set", choices=sorted(A.SETS), required=True)
    ap.add_argument("--linter", metavar="REV", default=None)
    a = ap.parse_args(argv)
    _, res = A.measure_set(A.SETS[a.set], false_flags=False, linter=a.linter, quiet=True)
    direct = [r for r in res["rows"] if r["category"] == "direct"]
    print(f"{a.set}: {sum(r['found'] for r in direct)}/{len(direct)} direct sites found")
    for title, counts in aggregates(res["rows"]).items():
        print(f"\nmissed, per {title}:")
        for key, n in counts.most_common():
            print(f"  {n:4d}  {key if isinstance(key, str) else ' / '.join(key)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
