"""How long `syncscan server` takes to publish diagnostics after a change: a 2,000-line file in
a warm 3,000-file repository (the target: within 100 ms).

It writes a synthetic repository (benchmarks/lsp_synthetic.py: model, loss, data and training
modules that import and call each other; 3,000 files, about 200k lines) and one 2,000-line module
in it, fills the lint cache with `syncscan lint` (a repository someone works in), starts the
server over stdio as an editor does, waits until it has indexed the repository, opens the big
file, and then, again and again: sends one didChange that adds or removes a syncing line
(`.item()`) inside a function, and times until the diagnostics of that version arrive. After
each change it waits until the background whole-file lint has had its say and counts how often
the whole-file result differed from the fast one.

Also timed, for scale: a whole-file lint of the big file in this process (what the server
would pay per change without the incremental path), and edits at module level (an import
added), which the server answers with a whole-file lint.

Usage:
    python benchmarks/lsp_latency.py                      # 3,000 files, 2,000 lines, 30 changes
    python benchmarks/lsp_latency.py --smoke --json out.json   # tiny, for the test suite

It needs pygls and lsprotocol (`pip install -e '.[lsp]'`); syncscan itself is taken from this
checkout. Results: docs/lsp.md.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import queue
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from lsp_synthetic import big_module, make_repo  # noqa: E402 - beside this script

# this checkout's syncscan, installed or not (the server and the lint run from another folder)
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))


class Client:
    """A bare LSP client over the server's stdio: requests, notifications, and a reader thread
    that stamps each incoming message with its arrival time."""

    def __init__(self, cmd: list[str], cwd: str) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=cwd, env=ENV)
        self.inbox: queue.Queue = queue.Queue()
        self._id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            headers = {}
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put((time.perf_counter(), None))
                    return
                line = line.strip()
                if not line:
                    break
                k, _, v = line.decode().partition(":")
                headers[k.lower()] = v.strip()
            body = out.read(int(headers["content-length"]))
            self.inbox.put((time.perf_counter(), json.loads(body)))

    def send(self, msg: dict) -> float:
        data = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        t = time.perf_counter()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
        self.proc.stdin.flush()
        return t

    def request(self, method: str, params) -> dict:
        self._id += 1
        self.send({"id": self._id, "method": method, "params": params})
        while True:
            _, msg = self.next(60)
            if msg.get("id") == self._id and "method" not in msg:
                return msg

    def notify(self, method: str, params) -> float:
        return self.send({"method": method, "params": params})

    def next(self, timeout: float):
        t, msg = self.inbox.get(timeout=timeout)
        if msg is None:
            raise RuntimeError("the server exited")
        return t, msg

    def wait(self, pred, timeout: float):
        """(arrival time, message) of the first incoming message `pred` accepts."""
        end = time.monotonic() + timeout
        while True:
            t, msg = self.next(max(0.01, end - time.monotonic()))
            if pred(msg):
                return t, msg

    def quiet(self, seconds: float, uri: str) -> list | None:
        """Diagnostics of `uri` published until `seconds` pass without any: the last ones, or None."""
        last = None
        while True:
            try:
                _, msg = self.next(seconds)
            except queue.Empty:
                return last
            if msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri:
                last = msg["params"]["diagnostics"]

    def close(self) -> None:
        try:
            self.request("shutdown", None)
            self.notify("exit", None)
            self.proc.wait(timeout=30)
        except Exception:  # noqa: BLE001 - a benchmark's teardown: kill what is left
            self.proc.kill()


def _diags(msg) -> list:
    return msg["params"]["diagnostics"]


def _is_diag(uri: str, version: int | None = None):
    def pred(msg) -> bool:
        return (msg.get("method") == "textDocument/publishDiagnostics" and msg["params"]["uri"] == uri
                and (version is None or msg["params"].get("version") == version))
    return pred


def _change(client: Client, uri: str, version: int, line: int, end_line: int, text: str) -> float:
    """didChange replacing lines [line, end_line) with `text`; returns when it was sent."""
    return client.notify("textDocument/didChange", {
        "textDocument": {"uri": uri, "version": version},
        "contentChanges": [{"range": {"start": {"line": line, "character": 0},
                                      "end": {"line": end_line, "character": 0}}, "text": text}]})


def _edit_sites(text: str, rng: random.Random, n: int) -> list[int]:
    """0-based lines inside function bodies where a statement can go (after `h = self.proj(x)` or
    `mean = x.mean(...)`, lines the templates hold in every model and helper)."""
    lines = text.splitlines()
    good = [i + 1 for i, line in enumerate(lines) if line.strip().startswith(("h = self.proj(x)", "mean = x.mean("))]
    return [rng.choice(good) for _ in range(n)]


def whole_file_lint_ms(path: str, text: str, repeat: int) -> float:
    from syncscan.server import adapter

    cfg = adapter.load_config(path)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        adapter.lint_text(path, text, cfg)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def new_calls_ms(path: str, text: str, repeat: int) -> tuple[float, float]:
    """(first, median of the rest) ms for the project's frequencies with the buffer's summary
    changed by a new call (what a change that adds or removes a call costs on top of the re-lint),
    in this process, against the project index the cache holds."""
    from syncscan.server import adapter
    from syncscan.server.session import Doc, Session

    s = Session()
    s.index(path)
    doc = Doc(Path(path).as_uri(), path, 1, text)
    s.fast(doc)
    assert doc.summary is not None
    ctx = s.project(doc)
    times = []
    for i in range(repeat + 1):
        functions = {k: dict(f, calls=list(f["calls"])) for k, f in doc.summary.functions.items()}
        first = next(iter(functions.values()))
        first["calls"] += [(f"_probe_{i}", "", ""), ("forward", "attr", "step")]
        summary, _ = adapter.summary_digest(functions)
        t = time.perf_counter()
        adapter.reached(path, summary, ctx)
        times.append((time.perf_counter() - t) * 1000)
    return times[0], statistics.median(times[1:])


def run(args) -> dict:
    work = Path(args.workdir or tempfile.mkdtemp(prefix="syncscan-lsp-")).resolve()
    root = work / "repo"
    t = time.perf_counter()
    if not (root / "pyproject.toml").exists() or args.regenerate:
        make_repo(root, args.files)
    big = root / "pkg0" / "big.py"
    text = big_module(args.lines)
    big.write_text(text)
    generated_s = time.perf_counter() - t
    # a repository someone works in: its lint cache filled
    t = time.perf_counter()
    subprocess.run([sys.executable, "-m", "syncscan", "lint", "--exit-zero", "--quiet", str(root)],
                   stdout=subprocess.DEVNULL, check=True, cwd=root, env=ENV)
    cache_fill_s = time.perf_counter() - t
    lint_ms = whole_file_lint_ms(str(big), text, args.repeat_full)
    calls_first_ms, calls_ms = new_calls_ms(str(big), text, args.repeat_full * 2)

    client = Client([sys.executable, "-m", "syncscan", "server"], cwd=str(root))
    uri = big.as_uri()
    result: dict = {}
    try:
        client.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                      "workspaceFolders": [{"uri": root.as_uri(), "name": "repo"}],
                                      "capabilities": {"general": {"positionEncodings": ["utf-16"]}},
                                      "initializationOptions": {"syncscan": {"fullLintDelayMs": args.full_delay_ms}}})
        t_init = client.notify("initialized", {})
        t_indexed, msg = client.wait(lambda m: m.get("method") == "window/logMessage"
                                     and "indexed" in m["params"]["message"], args.index_timeout)
        index_s = t_indexed - t_init
        t0 = client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                     "text": text}})
        t1, msg = client.wait(_is_diag(uri, 1), 120)
        open_ms = (t1 - t0) * 1000
        settled = client.quiet(args.quiet_s, uri) or _diags(msg)
        rng = random.Random(7)
        lines = text.splitlines(True)
        fast_ms, differed, n_diags = [], 0, []
        version = 1
        for i, at in enumerate(_edit_sites(text, rng, args.changes)):
            version += 1
            indent = lines[at - 1][:len(lines[at - 1]) - len(lines[at - 1].lstrip())]
            new_line = f"{indent}_probe_{i} = x.sum().item()\n"
            lines.insert(at, new_line)
            t0 = _change(client, uri, version, at, at, new_line)
            t1, msg = client.wait(_is_diag(uri, version), 120)
            fast_ms.append((t1 - t0) * 1000)
            fast = _diags(msg)
            n_diags.append(len(fast))
            final = client.quiet(args.quiet_s, uri)
            if final is not None and final != fast:
                differed += 1
            # and take the line out again (another change, timed the same way)
            version += 1
            del lines[at]
            t0 = _change(client, uri, version, at, at + 1, "")
            t1, msg = client.wait(_is_diag(uri, version), 120)
            fast_ms.append((t1 - t0) * 1000)
            final = client.quiet(args.quiet_s, uri)
            if final is not None and final != _diags(msg):
                differed += 1
        # module-level edits: the server lints the whole file
        module_ms = []
        for k in range(args.module_changes):
            version += 1
            new_line = f"import math as _m{k}\n"
            t0 = _change(client, uri, version, 2, 2, new_line)
            t1, msg = client.wait(_is_diag(uri, version), 120)
            module_ms.append((t1 - t0) * 1000)
            client.quiet(args.quiet_s, uri)
        result = {
            "files": args.files + 1, "big_file_lines": text.count("\n"), "changes": len(fast_ms),
            "diagnostics_in_big_file": statistics.median(n_diags) if n_diags else len(settled),
            "fast_ms_median": statistics.median(fast_ms), "fast_ms_p90": _p90(fast_ms),
            "fast_ms": [round(x, 1) for x in fast_ms],
            "whole_file_differed": differed,
            "module_level_ms_median": statistics.median(module_ms) if module_ms else None,
            "whole_file_lint_ms": lint_ms, "new_calls_ms": calls_ms, "new_calls_first_ms": calls_first_ms,
            "open_ms": open_ms, "index_s": index_s,
            "cache_fill_s": cache_fill_s, "generated_s": generated_s,
            "debounce_ms": 25, "full_lint_delay_ms": args.full_delay_ms,
            "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
            "load_average": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
            "date": time.strftime("%Y-%m-%d"),
        }
    finally:
        client.close()
    return result


def _p90(xs: list[float]) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(0.9 * (len(xs) - 1)))]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--files", type=int, default=3000)
    p.add_argument("--lines", type=int, default=2000)
    p.add_argument("--changes", type=int, default=15, help="edit sites; each is two changes (add, remove)")
    p.add_argument("--module-changes", type=int, default=3)
    p.add_argument("--repeat-full", type=int, default=5)
    p.add_argument("--full-delay-ms", type=int, default=300)
    p.add_argument("--quiet-s", type=float, default=2.0, help="silence that means the server is done with a change")
    p.add_argument("--index-timeout", type=float, default=900)
    p.add_argument("--workdir", help="keep the generated repository here (default: a temporary folder)")
    p.add_argument("--regenerate", action="store_true")
    p.add_argument("--smoke", action="store_true", help="tiny sizes, for the test suite")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    if args.smoke:
        args.files, args.lines, args.changes, args.module_changes = 20, 150, 2, 1
        args.repeat_full, args.quiet_s, args.full_delay_ms = 1, 1.0, 100
    r = run(args)
    if args.json:
        Path(args.json).write_text(json.dumps(r, indent=2) + "\n")
    print(f"syncscan server latency: {r['files']} files, a {r['big_file_lines']}-line file with "
          f"{r['diagnostics_in_big_file']:g} diagnostics ({r['machine']}, load {r['load_average']:.1f})")
    print(f"  {'diagnostics after a change (fast path), median':<52} {r['fast_ms_median']:8.1f} ms   "
          f"(p90 {r['fast_ms_p90']:.1f} ms, {r['changes']} changes, debounce {r['debounce_ms']} ms included)")
    print(f"  {'whole-file result differed from the fast one':<52} {r['whole_file_differed']:8d} of {r['changes']}")
    if r["module_level_ms_median"] is not None:
        print(f"  {'after a module-level edit (whole-file lint), median':<52} {r['module_level_ms_median']:8.1f} ms")
    print(f"  {'whole-file lint of the file in-process, median':<52} {r['whole_file_lint_ms']:8.1f} ms")
    print(f"  {'project frequencies with new calls in the file, median':<52} {r['new_calls_ms']:8.1f} ms   "
          f"(first {r['new_calls_first_ms']:.1f} ms)")
    print(f"  {'first diagnostics after didOpen':<52} {r['open_ms']:8.1f} ms")
    print(f"  {'indexing the repository (warm cache)':<52} {r['index_s']:8.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
