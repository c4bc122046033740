"""What the light pass costs: its ms/step over the bare pass's, per script and light-pass recipe.

    python benchmarks/perturbation.py [--recipes cuda,lean,full] [--repeats 2] [--budget 250] [--json PATH]
    python benchmarks/perturbation.py --cpu [--repeats 3]          # no GPU: the fixtures on the CPU, small
    python benchmarks/perturbation.py --cpu-smoke [--json PATH]     # one tiny fixture run per recipe (a test)

For each script and recipe, `syncscan profile --passes bare,light --light-pass RECIPE` runs in a
process of its own (the recipes alternate: their order turns round by round), and its report's
`perturbation.light_vs_bare` is the ratio: the light pass's ms/step over the bare pass's, both
timed with CUDA events at the same step boundaries. The table gives the median ratio per recipe
and the bare ms/step. `cuda` is what the light pass records now (CUDA activity only, no CPU ops:
syncscan.runtime.session.profiler_options), `lean` what it recorded before (CPU ops without
external correlation), `full` torch's defaults.

Then, on a GPU, an end-to-end check of what the cuda recipe gives up: `syncscan profile` with all
three passes, once with `--light-pass cuda` and once with `lean`, on the first script: the light
ops taken from the detailed pass (steps whose CUDA calls matched, calls paired), and the two
reports side by side (sync sites: op, scope, syncs per step; GPU idle; the predicted saving).

Scripts (host-bound on an H100, where the profiler's per-op cost shows most):
- the fixtures masked_loss_naive (batch 16, 64x64) and classic_loop_naive (batch 64, 32x32);
- two public training scripts from pytorch/examples, unmodified, read from .bench/examples/
  (gitignored: copy them there with `git archive` of pytorch/examples, see .bench/examples/COMMIT):
  word_language_model/main.py (2-layer LSTM, AdamW; a synthetic corpus of the same shape as
  wikitext-2, written to a temporary folder) and mnist/main.py (its CNN with Adadelta; synthetic
  MNIST files in its ../data/MNIST/raw, as torchvision reads them). A script that is not there is
  left out, with a line saying so.

Budget: the first round always runs whole; after it, a script's runs of a later round start only
if they should end within `--budget` seconds (judged by that script's slowest round so far), and
the check runs between the two. About 4 minutes on an H100 with the defaults (3 recipes x 4
scripts a round, 10-15 s a run).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
EXAMPLES = REPO / ".bench" / "examples"
RECIPES = ("cuda", "lean", "full")


def _fixture(name: str, *args: str) -> dict:
    return {"name": name, "script": str(FIXTURES / f"{name.split(' ')[0]}.py"), "args": list(args), "cwd": None}


def gpu_scripts(data: Path) -> list[dict]:
    scripts = [
        _fixture("masked_loss_naive", "--device", "cuda", "--batch", "16", "--size", "64", "--steps", "100000"),
        _fixture("classic_loop_naive", "--device", "cuda", "--batch", "64", "--size", "32", "--steps", "100000"),
    ]
    lm = EXAMPLES / "word_language_model" / "main.py"
    if lm.is_file():
        corpus = data / "wikitext-2"
        write_corpus(corpus)
        scripts.append({"name": "examples/word_language_model", "script": str(lm), "cwd": str(lm.parent),
                        "args": ["--accel", "--use-optimizer", "--lr", "0.001", "--epochs", "1", "--data", str(corpus),
                                 "--save", str(data / "model.pt")]})
    mnist = EXAMPLES / "mnist" / "main.py"
    if mnist.is_file():
        write_mnist(EXAMPLES / "data" / "MNIST" / "raw")  # main.py reads ../data from its folder
        scripts.append({"name": "examples/mnist", "script": str(mnist), "cwd": str(mnist.parent),
                        "args": ["--epochs", "1"]})
    return scripts


def write_corpus(folder: Path, vocab: int = 10000, seed: int = 0) -> None:
    """Text files shaped like wikitext-2 (a 10k-word vocabulary; long enough for the schedule)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(vocab)]
    for name, lines in (("train.txt", 6000), ("valid.txt", 300), ("test.txt", 300)):
        with open(folder / name, "w", encoding="utf8") as f:
            for _ in range(lines):
                f.write(" ".join(rng.choice(words) for _ in range(12)) + "\n")


def write_mnist(raw: Path, n_train: int = 12800, n_test: int = 1000, seed: int = 0) -> None:
    """Synthetic MNIST in the idx files torchvision's MNIST reads (it skips the download when
    they are there)."""
    raw.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images, labels = raw / f"{prefix}-images-idx3-ubyte", raw / f"{prefix}-labels-idx1-ubyte"
        if images.is_file() and labels.is_file():
            continue
        images.write_bytes((2051).to_bytes(4, "big") + n.to_bytes(4, "big") + (28).to_bytes(4, "big")
                           + (28).to_bytes(4, "big") + rng.randbytes(n * 28 * 28))
        labels.write_bytes((2049).to_bytes(4, "big") + n.to_bytes(4, "big")
                           + bytes(rng.randrange(10) for _ in range(n)))


def cpu_scripts(smoke: bool) -> list[dict]:
    """The fixtures on the CPU, small enough to be host-bound (on a CPU run the light pass records
    CPU ops only: both recipes record the same, so this measures the CPU-op cost alone)."""
    small = ["--device", "cpu", "--batch", "2", "--size", "16", "--steps", "100000"]
    names = ["masked_loss_naive"] if smoke else ["masked_loss_naive", "masked_loss_fixed", "classic_loop_naive",
                                                 "classic_loop_fixed"]
    return [_fixture(n, *small) for n in names]


def profile_once(entry: dict, recipe: str, schedule: list[str], workdir: Path, tag: str,
                 passes: str = "bare,light") -> dict:
    """One `syncscan profile` run: the report's perturbation (and the report), or the error."""
    out = workdir / f"{tag}.json"
    cmd = [sys.executable, "-m", "syncscan", "profile", "--passes", passes, "--light-pass", recipe, *schedule,
           "--no-lint", "--no-fail-on-sync", "--no-tensorboard-copy", "--format", "json", "--output", str(out),
           "--logdir", str(workdir / tag), entry["script"], *entry["args"]]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    if "cpu" in entry["args"]:  # one thread: a shared CPU with torch's threads spinning is ~100x slower
        env.setdefault("OMP_NUM_THREADS", "1")
    started = time.perf_counter()
    p = subprocess.run(cmd, cwd=entry["cwd"] or str(REPO), env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, timeout=600)
    try:
        report = json.loads(out.read_text())
        pert = report["perturbation"]
    except (OSError, ValueError, KeyError):
        last = (p.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"exit {p.returncode}: {last}"}
    return {"ratio": pert.get("light_vs_bare"), "bare_ms": pert.get("bare_ms_per_step"),
            "light_ms": pert.get("light_ms_per_step"), "clock": pert.get("clock"),
            "recorded": pert.get("light_activities"), "seconds": round(time.perf_counter() - started, 1),
            "report": report}


def run(scripts: list[dict], recipes: list[str], repeats: int, schedule: list[str], budget: float,
        between=None) -> list[dict]:
    """The rounds (see the module docstring); `between(workdir)` runs after the first round."""
    rows: dict[tuple, dict] = {(s["name"], r): {"script": s["name"], "recipe": r, "runs": [], "errors": []}
                               for s in scripts for r in recipes}
    started = time.perf_counter()
    slowest: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="syncscan-perturbation-") as tmp:
        for k in range(repeats):
            if k == 1 and between is not None:
                between(Path(tmp))
            for s in scripts:
                elapsed = time.perf_counter() - started
                if k and elapsed + slowest.get(s["name"], 0.0) > budget:
                    print(f"  {s['name']}: round {k + 1} left out (budget of {budget:.0f} s)", file=sys.stderr)
                    continue
                block = time.perf_counter()
                shift = k % len(recipes)
                for r in recipes[shift:] + recipes[:shift]:  # each round another order: drift hits all
                    res = profile_once(s, r, schedule, Path(tmp), f"{len(rows)}-{k}-{s['name'].replace('/', '_')}-{r}")
                    res.pop("report", None)
                    row = rows[(s["name"], r)]
                    (row["errors"] if "error" in res else row["runs"]).append(res)
                    print(f"  {s['name']:<32} {r:<5} {res}", file=sys.stderr, flush=True)
                slowest[s["name"]] = max(slowest.get(s["name"], 0.0), time.perf_counter() - block)
        if repeats == 1 and between is not None:
            between(Path(tmp))
    out = []
    for row in rows.values():
        ratios = [x["ratio"] for x in row["runs"] if x.get("ratio")]
        bare = [x["bare_ms"] for x in row["runs"] if x.get("bare_ms")]
        row["median_ratio"] = round(statistics.median(ratios), 3) if ratios else None
        row["median_bare_ms"] = round(statistics.median(bare), 3) if bare else None
        row["spread"] = round(max(ratios) - min(ratios), 3) if len(ratios) > 1 else None
        out.append(row)
    return out


def _sites(report: dict) -> list[dict]:
    n = max(1, len(report.get("steps") or []))
    return [{"op": s.get("op"), "outer_op": s.get("outer_op"), "scope": s.get("scope"), "line": s.get("line"),
             "per_step": round(s["count"] / n, 2), "gpu_idle_ms": s.get("gpu_idle_ms"),
             "saving_rewrite_ms": s.get("saving_rewrite_ms")}
            for s in report.get("syncs") or [] if s.get("only_in") != "detail"]


def check_reports(entry: dict, schedule: list[str], workdir: Path) -> dict:
    """The default profile (all passes) with the light pass's cuda and lean recipes: what the
    cuda recipe's light trace got from the detailed pass, and the two reports' sites and
    predictions side by side."""
    out: dict = {"script": entry["name"]}
    for recipe in ("cuda", "lean"):
        res = profile_once(entry, recipe, schedule, workdir, f"check-{recipe}", passes="bare,light,detail")
        if "error" in res:
            out[recipe] = {"error": res["error"]}
            continue
        rep = res["report"]
        pred = rep.get("prediction") or {}
        out[recipe] = {"light_vs_bare": res["ratio"], "light_ops": rep.get("light_ops"),
                       "syncs_per_step": (rep.get("sync_summary") or {}).get("per_step"),
                       "gpu_idle_ms_per_step": pred.get("gpu_idle_from_syncs_ms_per_step"),
                       "saving_syncs_ms_per_step": pred.get("saving_syncs_ms_per_step"),
                       "saving_ms_per_step": pred.get("saving_ms_per_step"),
                       "replay_fit": (rep.get("replay") or {}).get("fit_error"),
                       "sites": _sites(rep), "notes": rep.get("notes")}
        print(f"  check {entry['name']} {recipe}: {out[recipe]['light_ops']} {res['ratio']}", file=sys.stderr,
              flush=True)
    return out


def check_table(check: dict) -> str:
    lines = [f"end-to-end check on {check['script']} (all passes; the light pass's recipe):",
             "| | light/bare | light ops from the detailed pass | syncs/step | GPU idle ms/step | "
             "saving w/o syncs | saving with rewrites | replay fit |", "|" + " --- |" * 8]
    for recipe in ("cuda", "lean"):
        x = check.get(recipe) or {}
        if "error" in x or not x:
            lines.append(f"| {recipe} | failed: {x.get('error', 'not run')} |" + " |" * 6)
            continue
        ops = x["light_ops"]
        graft = (f"{ops['exact_steps']}/{ops['steps']} steps same calls, {ops['anchored_calls']}/{ops['calls']} "
                 "calls paired") if ops else "-"
        lines.append(f"| {recipe} | {x['light_vs_bare']} | {graft} | {x['syncs_per_step']} | "
                     f"{x['gpu_idle_ms_per_step']} | {x['saving_syncs_ms_per_step']} | {x['saving_ms_per_step']} | "
                     f"{x['replay_fit']} |")
    cuda, lean = (check.get(r) or {} for r in ("cuda", "lean"))
    if cuda.get("sites") is not None and lean.get("sites") is not None:
        key = lambda s: (s["op"], s["outer_op"], s["scope"], s["line"], s["per_step"])  # noqa: E731
        same = sorted(map(key, cuda["sites"])) == sorted(map(key, lean["sites"]))
        lines.append(f"sites (op, outer op, scope, line, syncs/step) the same in both: {'yes' if same else 'NO'}")
    return "\n".join(lines)


def table(rows: list[dict], recipes: list[str]) -> str:
    by_script: dict[str, dict] = {}
    for r in rows:
        by_script.setdefault(r["script"], {})[r["recipe"]] = r
    head = "| script | bare ms/step | " + " | ".join(f"light/bare {r}" for r in recipes) + " |"
    lines = [head, "|" + " --- |" * (2 + len(recipes))]
    for name, per in by_script.items():
        bare = next((x["median_bare_ms"] for x in per.values() if x["median_bare_ms"]), None)
        cells = []
        for r in recipes:
            x = per.get(r) or {}
            if x.get("median_ratio") is None:
                cells.append("failed" if x.get("errors") else "-")
            else:
                n = len(x["runs"])
                cells.append(f"{x['median_ratio']:.2f}x" + (f" (n={n}, ±{x['spread'] / 2:.2f})" if n > 1 else " (n=1)"))
        lines.append(f"| {name} | {'-' if bare is None else f'{bare:.2f}'} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--recipes", default=",".join(RECIPES), help="light-pass recipes to compare (cuda,lean,full)")
    ap.add_argument("--repeats", type=int, default=2, help="alternating rounds (medians over them)")
    ap.add_argument("--steps", type=int, default=20, help="measured steps per pass")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up steps before each pass")
    ap.add_argument("--budget", type=float, default=250.0,
                    help="seconds within which a later round's runs must end (the first round always runs)")
    ap.add_argument("--no-check", action="store_true", help="leave out the end-to-end check of the reports")
    ap.add_argument("--only", help="comma-separated script names (substrings) to run")
    ap.add_argument("--json", metavar="PATH", help="write the results here")
    ap.add_argument("--cpu", action="store_true", help="no GPU: the fixtures on the CPU")
    ap.add_argument("--cpu-smoke", action="store_true", help="no GPU: one tiny fixture, one round")
    args = ap.parse_args(argv)
    recipes = [r for r in args.recipes.split(",") if r]
    if set(recipes) - set(RECIPES):
        ap.error(f"--recipes: choose from {', '.join(RECIPES)}")
    import torch

    with tempfile.TemporaryDirectory(prefix="syncscan-perturbation-data-") as data:
        if args.cpu_smoke:
            scripts, repeats, schedule = cpu_scripts(True), 1, ["--wait", "0", "--warmup", "1", "--steps", "3"]
        elif args.cpu:
            scripts, repeats = cpu_scripts(False), args.repeats
            schedule = ["--wait", "2", "--warmup", str(args.warmup), "--steps", str(args.steps)]
        else:
            if not torch.cuda.is_available():
                ap.error("no CUDA GPU: use --cpu-smoke")
            scripts, repeats = gpu_scripts(Path(data)), args.repeats
            schedule = ["--wait", "2", "--warmup", str(args.warmup), "--steps", str(args.steps)]
            for name in ("word_language_model", "mnist"):
                if not (EXAMPLES / name / "main.py").is_file():
                    print(f"{name}: not in {EXAMPLES} (see --help), left out", file=sys.stderr)
        if args.only:
            keep = args.only.split(",")
            scripts = [s for s in scripts if any(k in s["name"] for k in keep)]
        check: dict = {}

        def between(workdir: Path) -> None:
            if not args.no_check and not args.cpu and not args.cpu_smoke and scripts:
                check.update(check_reports(scripts[0], schedule, workdir))

        rows = run(scripts, recipes, repeats, schedule, args.budget, between)
    result = {"device": torch.cuda.get_device_name() if torch.cuda.is_available() else "cpu",
              "torch": torch.__version__, "recipes": recipes, "schedule": schedule, "rows": rows,
              "check": check or None,
              "examples_commit": (EXAMPLES / "COMMIT").read_text().strip() if (EXAMPLES / "COMMIT").is_file() else None}
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    if check:
        print(check_table(check))
        print()
    print(f"light pass over bare pass, ms/step ({result['device']}, torch {result['torch']}; medians)")
    print(table(rows, recipes))
    return 0 if all(r["median_ratio"] is not None for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
