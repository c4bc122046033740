"""A copy of a torch 2.x trace that TensorBoard's profiler plugin (torch-tb-profiler 0.4.3) reads fully.

The plugin predates the category names torch 2.x writes. What it gets wrong, and what the copy
changes (read off torch_tb_profiler/profiler/{trace,event_parser,node,op_tree}.py):

- `cuda_runtime` / `cuda_driver`: unknown categories, so no kernel is linked to the op that
  launched it and the Operator and Kernel views show device time 0 for every op, and the
  Overview has no "Runtime" share. Renamed `runtime`, the name the plugin knows.
- runtime calls made outside any op (`torch.cuda.synchronize()`, event records) carry no
  `External id`; the plugin attaches calls with id 0 to the thread's root, so they get 0.
- `gpu_user_annotation`: the plugin maps it to a host annotation, so `ProfilerStep#N` projected
  on each GPU stream counts as extra steps (a two-stream trace shows 9 steps for 3) and the
  other scopes count as CPU time. Renamed `gpu_annotation`, which the plugin ignores; the
  Trace view still draws them.

Left as they are: `fwdbwd` flows (renaming them `forward_backward` makes the plugin's module
builder crash on torch 2.x traces), `cuda_sync` (ignored by the plugin, shown in the Trace view).
The copy records what it changed under the top-level key `syncscan_tbcompat`.
"""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

RENAMED_CATEGORIES = {"cuda_runtime": "runtime", "cuda_driver": "runtime",
                      "gpu_user_annotation": "gpu_annotation"}
RUNTIME_CATEGORIES = {"cuda_runtime", "cuda_driver"}


def _read(path: Path) -> dict:
    with open(path, "rb") as f:
        magic = f.read(2)
    opener = gzip.open if magic == b"\x1f\x8b" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def convert(trace: dict) -> dict:
    """Change `trace` in place (see the module docstring); return a count of the changes."""
    renamed: dict[str, int] = {}
    set_ids = 0
    for ev in trace.get("traceEvents", ()):
        cat = ev.get("cat")
        new = RENAMED_CATEGORIES.get(cat)
        if new is None:
            continue
        ev["cat"] = new
        key = f"{cat}->{new}"
        renamed[key] = renamed.get(key, 0) + 1
        if cat in RUNTIME_CATEGORIES:
            args = ev.get("args")
            if args is None:
                args = ev["args"] = {}
            if "External id" not in args:
                args["External id"] = 0
                set_ids += 1
    return {"renamed": renamed, "external_id_set": set_ids}


def make_compatible(src, dst) -> dict:
    """Write to `dst` (.json or .json.gz by its name) a TensorBoard-compatible copy of the trace
    `src` (.json or .json.gz, detected by content). Returns what was changed."""
    src, dst = Path(src), Path(dst)
    trace = _read(src)
    changes = convert(trace)
    trace["syncscan_tbcompat"] = {"source": src.name, **changes}
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    opener = gzip.open if dst.name.endswith(".gz") else open
    with opener(tmp, "wt", encoding="utf-8") as f:
        json.dump(trace, f, separators=(",", ":"))
    os.replace(tmp, dst)  # TensorBoard polls the folder: never let it see half a file
    return changes
