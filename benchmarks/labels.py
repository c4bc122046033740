"""Hand labels for the linter's precision and rewrites, on public training repositories it was never tuned on.

The labels live in benchmarks/data/labels/:

- repos.json: each repository's GitHub name, pinned commit and the files in scope (what is linted);
- precision.jsonl: one record per finding of `syncscan lint --all` on those files, judged by reading the
  code: does the line make the host wait for the GPU when the code runs as intended on a GPU
  (`verdict`), how often it runs (`context`: hot = every step of training or inference, epoch = every
  N steps / per evaluation / per epoch, cold = set-up, one-off, tools), and for true per-step findings
  whether the suggested rewrite is right in that context (`rewrite`: right / wrong, with a reason).
  A record is keyed by repository, path, rule code, the flagged line's text and its occurrence among
  equal keys, not by line number, so labels survive edits of the rules; the suggestion text it judged
  is kept, so a changed suggestion is asked to be judged again;
- recall.jsonl: the per-step syncs of each repository's training (or rollout) step found by reading it,
  located by their line's text, to count how many the linter's default (hot) output reports.

This script copies the pinned files (from a local mirror of GitHub, else a clone), runs the current
linter (or `--linter REV`, another revision's) on them, joins the findings to the labels and prints
precision (hot / all), context agreement, rewrite correctness, per-step recall, and the findings that
have no label yet: new findings after a rule change must be labelled before the figures are quoted.

    python benchmarks/labels.py [--format text|md|json] [--linter REV] [--repos NAME,...]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "benchmarks" / "data" / "labels"
SRC = REPO / ".bench" / "labels-src"
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from accuracy import copy_repo, lint, linter_at

from syncscan.join import statement_span

# -- data -----------------------------------------------------------------------------------------

def load(data: Path = DATA) -> tuple[dict, list[dict], list[dict]]:
    """(repos, precision labels, recall notes) from the label folder; a malformed line names its file."""
    repos = json.loads((data / "repos.json").read_text())

    def jsonl(name: str) -> list[dict]:
        out = []
        for n, line in enumerate((data / name).read_text().splitlines(), 1):
            if line.strip():
                try:
                    out.append(json.loads(line))
                except json.JSONDecodeError as e:
                    raise ValueError(f"{data / name}:{n}: {e.msg}") from None
        return out
    return repos, jsonl("precision.jsonl"), jsonl("recall.jsonl")


def sources(repos: dict) -> dict:
    """{repository: folder holding its files in scope at the pinned commit}."""
    roots = {}
    for name, r in repos.items():
        dest = SRC / f"{name}-{r['commit'][:12]}"
        if any(not (dest / f).is_file() for f in r["files"]):  # first run, or files added to the scope
            shutil.rmtree(dest, ignore_errors=True)
            copy_repo(r["github"], r["commit"], r["files"], dest)
        roots[name] = dest
    return roots


def findings_of(repos: dict, roots: dict, linter: Path | None = None) -> list[dict]:
    """`syncscan lint --all` on every repository's files in scope; each finding gets `repo`, a path
    relative to the repository and the flagged line's text."""
    out = []
    for name, r in repos.items():
        files = [roots[name] / f for f in r["files"]]
        for f in lint(files, linter):
            rel = str(Path(f["path"]).resolve().relative_to(roots[name].resolve()))
            text = (roots[name] / rel).read_text(encoding="utf-8").splitlines()[f["line"] - 1].strip()
            out.append({**f, "repo": name, "path": rel, "source": text})
    return out


# -- join and score (pure) --------------------------------------------------------------------------

def key_findings(findings: list[dict]) -> list[tuple[tuple, dict]]:
    """Each finding with its label key (repo, path, code, line text, occurrence among equal keys), the
    occurrences counted in (path, line, code) order as the labels were made."""
    seen: Counter = Counter()
    out = []
    for f in sorted(findings, key=lambda f: (f["repo"], f["path"], f["line"], f["code"])):
        k = (f["repo"], f["path"], f["code"], f["source"])
        seen[k] += 1
        out.append(((*k, seen[k]), f))
    return out


def join(findings: list[dict], labels: list[dict]) -> dict:
    """Findings matched to labels: {"pairs": [(finding, label)], "unlabelled": [finding], "gone": [label]}."""
    by_key = {(x["repo"], x["path"], x["code"], x["source"], x.get("occurrence", 1)): x for x in labels}
    pairs, unlabelled, used = [], [], set()
    for k, f in key_findings(findings):
        lab = by_key.get(k)
        if lab is None:
            unlabelled.append(f)
        else:
            pairs.append((f, lab))
            used.add(k)
    gone = [x for k, x in by_key.items() if k not in used]
    return {"pairs": pairs, "unlabelled": unlabelled, "gone": gone}


def _frac(a: int, b: int) -> dict:
    return {"n": b, "true": a, "rate": a / b if b else None}


def _shown(f: dict) -> bool:
    """In the default output (syncscan.lint.report.shown_by_default): hot and of high confidence."""
    return f.get("context") == "hot" and f.get("confidence", "high") == "high"


def score(joined: dict) -> dict:
    """Precision (all findings and the default output's hot ones), context agreement and rewrite
    correctness over the labelled findings."""
    pairs = joined["pairs"]
    # the default output: hot findings of high confidence (low confidence ones show with --all only)
    hot = [(f, x) for f, x in pairs if _shown(f)]
    cold = [(f, x) for f, x in pairs if not _shown(f)]
    low_hot = [(f, x) for f, x in cold if f.get("context") == "hot"]
    res = {
        "precision_all": _frac(sum(x["verdict"] for _, x in pairs), len(pairs)),
        "precision_hot": _frac(sum(x["verdict"] for _, x in hot), len(hot)),
        "precision_cold": _frac(sum(x["verdict"] for _, x in cold), len(cold)),
        "precision_hot_low": _frac(sum(x["verdict"] for _, x in low_hot), len(low_hot)),
        # shown as hot and really once per step: what a user of the default output acts on
        "hot_and_per_step": _frac(sum(x["verdict"] and x["context"] == "hot" for _, x in hot), len(hot)),
        "unlabelled": len(joined["unlabelled"]), "gone": len(joined["gone"]),
    }
    ctx: Counter = Counter()
    for f, x in pairs:
        if x["verdict"]:
            ctx[(x["context"], f.get("context"))] += 1
    res["context"] = {f"{a}->{b}": n for (a, b), n in sorted(ctx.items())}
    rw = [(f, x) for f, x in pairs if x["verdict"] and "rewrite" in x]
    changed = [(f, x) for f, x in rw if (f.get("suggestion") or "") != x.get("suggestion", "")]
    judged = [(f, x) for f, x in rw if (f, x) not in changed]
    res["rewrite"] = _frac(sum(x["rewrite"] == "right" for _, x in judged), len(judged))
    res["rewrite_changed"] = len(changed)
    for field in ("repo", "code"):
        per: dict = defaultdict(lambda: [0, 0, 0, 0])
        for f, x in pairs:
            v = per[f[field]]
            v[0] += 1
            v[1] += x["verdict"]
            if _shown(f):
                v[2] += 1
                v[3] += x["verdict"]
        res["per_" + field] = {k: {"all": v[0], "true": v[1], "hot": v[2], "hot_true": v[3]}
                               for k, v in sorted(per.items())}
    res["false"] = [(f, x) for f, x in pairs if not x["verdict"]]
    res["wrong_rewrites"] = [(f, x) for f, x in judged if x["rewrite"] != "right"]
    res["changed_rewrites"] = changed
    return res


def locate(note: dict, root: Path) -> int:
    """The line of a recall note: the `occurrence`-th line of the file whose text is the note's source."""
    path = root / note["path"]
    lines = [i for i, t in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if t.strip() == note["source"]]
    occ = note.get("occurrence", 1)
    if len(lines) < occ:
        raise ValueError(f"{path}: no line #{occ} reading {note['source']!r} (recall.jsonl is stale)")
    return lines[occ - 1]


def recall(findings: list[dict], notes: list[dict], roots: dict) -> dict:
    """Per-step syncs found: a note counts as found in the default output when a hot finding lies in its
    statement, found at all with any finding there."""
    by_file = defaultdict(list)
    for f in findings:
        by_file[(f["repo"], f["path"])].append(f)
    rows = []
    for n in notes:
        root = roots[n["repo"]]
        line = locate(n, root)
        a, b = statement_span(str(root / n["path"]), line)
        hits = [f for f in by_file[(n["repo"], n["path"])] if a <= f["line"] <= b]
        rows.append({**n, "line": line, "found": bool(hits), "found_hot": any(_shown(f) for f in hits)})
    per: dict = defaultdict(lambda: [0, 0, 0])
    for r in rows:
        for k in (r["repo"], "all"):
            per[k][0] += 1
            per[k][1] += r["found_hot"]
            per[k][2] += r["found"]
    return {"rows": rows, "per": {k: {"syncs": v[0], "found_hot": v[1], "found": v[2]} for k, v in per.items()}}


# -- report ---------------------------------------------------------------------------------------------

def _pct(d: dict) -> str:
    return f"{d['true']}/{d['n']} = {100 * d['rate']:.1f}%" if d["n"] else "0/0"


def report(res: dict, rec: dict, joined: dict, repos: dict, md: bool = False) -> str:
    out = []
    h = (lambda t: out.append(f"\n### {t}\n")) if md else (lambda t: out.append(f"\n== {t}"))
    out.append(f"{len(repos)} repositories, {len(joined['pairs'])} labelled findings "
               f"({res['unlabelled']} unlabelled, {res['gone']} labels no longer flagged).")
    if res["unlabelled"]:
        out.append(f"WARNING: {res['unlabelled']} findings have no label: label them before quoting the figures.")
    h("Precision")
    out.append(f"- all findings (`--all`): {_pct(res['precision_all'])}")
    out.append(f"- hot findings (the default output): {_pct(res['precision_hot'])}")
    out.append(f"- the other findings (cold, epoch or low confidence: shown with `--all`): {_pct(res['precision_cold'])}")
    out.append(f"  - of which hot but of low confidence: {_pct(res['precision_hot_low'])}")
    out.append(f"- hot findings that are true and run every step: {_pct(res['hot_and_per_step'])}")
    out.append(f"- suggested rewrites right in context (true per-step findings): {_pct(res['rewrite'])}"
               + (f"; {res['rewrite_changed']} suggestions changed since labelled (judge them again)"
                  if res["rewrite_changed"] else ""))
    every = rec["per"].get("all", {"syncs": 0, "found_hot": 0, "found": 0})  # no notes yet for these repositories
    out.append(f"- per-step syncs of the training steps reported in the default output: "
               f"{every['found_hot']}/{every['syncs']}; with `--all`: {every['found']}/{every['syncs']}")
    def table(title: str, per: dict, with_recall: bool) -> None:
        h(title)
        head = ["", "findings", "true", "hot", "hot true"] + (["per-step syncs", "in the default output"]
                                                               if with_recall else [])
        if md:
            out.append("| " + " | ".join(head) + " |")
            out.append("| --- |" + " ---: |" * (len(head) - 1))
        for k, v in per.items():
            cells = [k, v["all"], v["true"], v["hot"], v["hot_true"]]
            if with_recall:
                r = rec["per"].get(k, {"syncs": 0, "found_hot": 0})
                cells += [r["syncs"], r["found_hot"]]
            out.append("| " + " | ".join(map(str, cells)) + " |" if md else "  " + "  ".join(map(str, cells)))
    table("Per repository", res["per_repo"], True)
    table("Per rule", res["per_code"], False)
    h("Context of the true findings (label -> linter)")
    out.append(", ".join(f"{k}: {n}" for k, n in res["context"].items()))
    h("False flags")
    for f, x in res["false"]:
        out.append(f"- `{f['repo']}/{f['path']}:{f['line']}` {f['code']} [{f.get('context')}] `{f['source'][:90]}` — {x['reason']}")
    h("Wrong rewrites")
    for f, x in res["wrong_rewrites"]:
        out.append(f"- `{f['repo']}/{f['path']}:{f['line']}` {f['code']} `{f['source'][:80]}` — {x['rewrite_reason']}")
    missed = [r for r in rec["rows"] if not r["found_hot"]]
    h("Per-step syncs not in the default output")
    for r in missed:
        out.append(f"- `{r['repo']}/{r['path']}:{r['line']}` `{r['source'][:90]}` — {r['reason']}"
                   + (" (found, but cold)" if r["found"] else ""))
    if joined["unlabelled"]:
        h("Unlabelled findings")
        for f in joined["unlabelled"]:
            out.append(f"- `{f['repo']}/{f['path']}:{f['line']}` {f['code']} [{f.get('context')}] `{f['source'][:90]}`")
    if res["changed_rewrites"]:
        h("Suggestions changed since labelled")
        for f, x in res["changed_rewrites"]:
            out.append(f"- `{f['repo']}/{f['path']}:{f['line']}` {f['code']}: now `{(f.get('suggestion') or '')[:100]}`")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--format", choices=("text", "md", "json"), default="text")
    ap.add_argument("--linter", metavar="REV", help="score the linter of this git revision instead of the working tree")
    ap.add_argument("--repos", default="", help="only these repositories (comma-separated)")
    ap.add_argument("--data", default=str(DATA), help="the label folder")
    a = ap.parse_args(argv)
    try:
        repos, labels, notes = load(Path(a.data))
        if a.repos:
            keep = set(a.repos.split(","))
            unknown = keep - set(repos)
            if unknown:
                raise ValueError(f"unknown repositories: {', '.join(sorted(unknown))}")
            repos = {k: v for k, v in repos.items() if k in keep}
            labels = [x for x in labels if x["repo"] in keep]
            notes = [n for n in notes if n["repo"] in keep]
        roots = sources(repos)
        findings = findings_of(repos, roots, linter_at(a.linter) if a.linter else None)
        joined = join(findings, labels)
        res = score(joined)
        rec = recall(findings, notes, roots)
    except (RuntimeError, OSError, ValueError) as e:
        print(f"labels.py: {e}", file=sys.stderr)
        return 2
    if a.format == "json":
        slim = {k: v for k, v in res.items() if k not in ("false", "wrong_rewrites", "changed_rewrites")}
        print(json.dumps({**slim, "recall": rec["per"]}, indent=2))
    else:
        print(report(res, rec, joined, repos, md=a.format == "md"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
