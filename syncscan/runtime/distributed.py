"""Profiling every rank of a torchrun job.

Launching. `syncscan profile --nproc-per-node N [--nnodes ... --rdzv-endpoint ...] script.py ARGS`
and `syncscan profile -- torchrun [torchrun options] script.py ARGS` both run torch's own launcher
(`torch.distributed.run`, the engine behind `torchrun`) in this process: its arguments are parsed
by its own parser, and only the entry point changes, to `python -m syncscan profile --logdir RUN
[the same schedule and options] script.py ARGS`. Every rank gets the same schedule and passes.

A rank. A `syncscan profile` that torchrun started (`RankContext.from_env`: RANK, WORLD_SIZE and
TORCHELASTIC_RUN_ID set, more than one rank) profiles its rank as a single run would, names its
traces by rank (TensorBoard's distributed view reads the `distributedInfo` torch writes into
each), writes its own report to RUN/ranks/rank-R.json and hands rank 0 a summary (its report
and its timeline, syncscan.trace.ranks). Rank 0 merges them into RUN/report.json and reports.

The hand-over goes through the job's own store (the TCPStore the elastic agent serves at
MASTER_ADDR:MASTER_PORT, so it works across nodes without a shared folder), or, where the
agent serves none, through files in the run folder (one node, or a shared folder).
"""

from __future__ import annotations

import json
import os
import time
import zlib
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Dict, List, Optional, Protocol

from syncscan.errors import UserError

# torchrun options `syncscan profile` takes itself, as (our dest, torchrun's flag)
LAUNCH_OPTIONS = (("nproc_per_node", "--nproc-per-node"), ("nnodes", "--nnodes"), ("node_rank", "--node-rank"),
                  ("rdzv_backend", "--rdzv-backend"), ("rdzv_endpoint", "--rdzv-endpoint"),
                  ("rdzv_id", "--rdzv-id"), ("master_addr", "--master-addr"), ("master_port", "--master-port"))
# the torchrun command line, as the launcher hands it to the ranks (for the report)
LAUNCHER_ENV = "SYNCSCAN_TORCHRUN"
# how long rank 0 waits for the other ranks' summaries once its own report is done
COLLECT_TIMEOUT_S = float(os.environ.get("SYNCSCAN_RANK_TIMEOUT", "600"))
_POLL_S = 0.2


@dataclass(frozen=True)
class RankContext:
    """This process's place in a torchrun job (torchrun's environment variables)."""

    rank: int
    local_rank: int
    world_size: int
    run_id: str
    restart: int
    master_addr: Optional[str]
    master_port: Optional[int]
    agent_store: bool

    @classmethod
    def from_env(cls, env=None) -> Optional["RankContext"]:
        """The context when torchrun started this process with more than one rank, else None."""
        env = os.environ if env is None else env
        if "TORCHELASTIC_RUN_ID" not in env or "RANK" not in env:
            return None
        try:
            world = int(env.get("WORLD_SIZE", "1"))
            rank = int(env["RANK"])
            port = int(env["MASTER_PORT"]) if env.get("MASTER_PORT") else None
            restart = int(env.get("TORCHELASTIC_RESTART_COUNT", "0"))
            local = int(env.get("LOCAL_RANK", rank))
        except ValueError:
            return None
        if world < 2:
            return None
        return cls(rank, local, world, env["TORCHELASTIC_RUN_ID"], restart, env.get("MASTER_ADDR"), port,
                   env.get("TORCHELASTIC_USE_AGENT_STORE") == "True")

    @property
    def primary(self) -> bool:
        return self.rank == 0

    def default_run_name(self, short_name: str) -> str:
        """One folder name for every rank (a time stamp would differ between ranks)."""
        tag = "".join(c for c in self.run_id if c.isalnum())[:12] or "job"
        return f"{short_name}-torchrun-{tag}"


# ------------------------------------------------------------------------------ launching


def _torch_run():
    try:
        from torch.distributed import run as torch_run
    except ImportError:
        raise UserError("--nproc-per-node and `-- torchrun` need PyTorch with torch.distributed: "
                        "pip install 'syncscan[profile]'") from None
    return torch_run


def launch_options(args) -> List[str]:
    """The torchrun options given to `syncscan profile` (empty when none was)."""
    out: List[str] = []
    for dest, flag in LAUNCH_OPTIONS:
        value = getattr(args, dest, None)
        if value is not None:
            out += [flag, str(value)]
    return out


def split_wrapped(command: List[str]) -> List[str]:
    """`torchrun OPTS script ARGS` or `python -m torch.distributed.run OPTS ...` -> torchrun's own
    arguments (OPTS script ARGS); UserError for anything else."""
    if not command:
        raise UserError("`syncscan profile --` needs a command: -- torchrun [options] script.py [args]")
    head = os.path.basename(command[0])
    if head in ("torchrun", "torchrun.exe"):
        return command[1:]
    if head.startswith("python") and command[1:3] in (["-m", "torch.distributed.run"],):
        return command[3:]
    raise UserError(f"`syncscan profile -- {command[0]} ...`: only a torchrun command can be wrapped "
                    "(torchrun ... or python -m torch.distributed.run ...)")


def parse_launch(torchrun_args: List[str]):
    """torchrun's parsed arguments (its own parser); UserError for what it rejects."""
    torch_run = _torch_run()
    try:
        ns = torch_run.parse_args(torchrun_args)
    except SystemExit:  # argparse already said why on stderr
        raise UserError("torchrun rejected its options (see above)") from None
    if ns.no_python:
        raise UserError("torchrun --no-python runs a program, not a Python script: syncscan profiles Python")
    return ns


def target_of(ns) -> List[str]:
    """The script (or -m module) and its arguments as torchrun would run them."""
    head = ["-m", ns.training_script] if ns.module else [ns.training_script]
    return [*head, *ns.training_script_args]


def launch(ns, worker_argv: List[str]) -> int:
    """Run torchrun (in this process) with every rank running `python -m syncscan <worker_argv>`.
    Returns the job's exit status: 0, or the first failed rank's."""
    torch_run = _torch_run()
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError

    ns.module, ns.no_python, ns.run_path = True, False, False
    ns.training_script, ns.training_script_args = "syncscan", list(worker_argv)
    try:
        torch_run.run(ns)
    except ChildFailedError as exc:
        _, failure = exc.get_first_failure()
        code = failure.exitcode
        return code if isinstance(code, int) and 0 < code < 256 else 1
    except (ValueError, RuntimeError) as exc:  # a bad --nnodes, an unreachable rendezvous endpoint...
        raise UserError(f"torchrun: {' '.join(str(exc).split())[:300]}") from None
    return 0


# ------------------------------------------------------------------------------ the hand-over


class Exchange(Protocol):
    def publish(self, rank: int, payload: dict) -> None: ...

    def collect(self, world_size: int, timeout_s: float) -> Dict[int, dict]: ...


def _encode(payload: dict) -> bytes:
    from syncscan.trace.ranks import jsonable

    return zlib.compress(json.dumps(payload, separators=(",", ":"), default=jsonable).encode("utf-8"), 6)


def _decode(data: bytes) -> Optional[dict]:
    try:
        out = json.loads(zlib.decompress(data).decode("utf-8"))
    except (zlib.error, ValueError, UnicodeDecodeError):
        return None
    return out if isinstance(out, dict) else None


class StoreExchange:
    """Through the job's TCPStore (the elastic agent's, at MASTER_ADDR:MASTER_PORT)."""

    def __init__(self, ctx: RankContext, tag: str):
        import torch.distributed as dist

        self.prefix = f"syncscan/{ctx.run_id}/{ctx.restart}/{tag}/rank/"
        assert ctx.master_addr and ctx.master_port, "exchange_for picks the store only where there is one"
        self.store = dist.TCPStore(ctx.master_addr, ctx.master_port, is_master=False,
                                   timeout=timedelta(seconds=max(COLLECT_TIMEOUT_S, 30)))

    def publish(self, rank: int, payload: dict) -> None:
        self.store.set(self.prefix + str(rank), _encode(payload))  # type: ignore[arg-type]  # bytes, as torch takes

    def collect(self, world_size: int, timeout_s: float) -> Dict[int, dict]:
        out: Dict[int, dict] = {}
        deadline = time.monotonic() + timeout_s
        left = list(range(world_size))
        while left:
            ready = [r for r in left if self.store.check([self.prefix + str(r)])]
            for r in ready:
                got = _decode(self.store.get(self.prefix + str(r)))
                if got is not None:
                    out[r] = got
                left.remove(r)
            if not left or time.monotonic() > deadline:
                break
            time.sleep(_POLL_S)
        return out


class FileExchange:
    """Through files in the run folder (every rank on one host, or a folder they all share)."""

    def __init__(self, run_dir: Path):
        self.dir = Path(run_dir) / "ranks"

    def _path(self, rank: int) -> Path:
        return self.dir / f"rank-{rank}.summary"

    def publish(self, rank: int, payload: dict) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self._path(rank).with_suffix(".tmp")
        tmp.write_bytes(_encode(payload))
        os.replace(tmp, self._path(rank))

    def collect(self, world_size: int, timeout_s: float) -> Dict[int, dict]:
        out: Dict[int, dict] = {}
        deadline = time.monotonic() + timeout_s
        while True:
            for r in range(world_size):
                if r not in out and self._path(r).exists():
                    got = _decode(self._path(r).read_bytes())
                    if got is not None:
                        out[r] = got
            if len(out) == world_size or time.monotonic() > deadline:
                return out
            time.sleep(_POLL_S)


def exchange_for(ctx: RankContext, run_dir: Path) -> Exchange:
    """The job's store when the agent serves one, else files in the run folder."""
    if ctx.agent_store and ctx.master_addr and ctx.master_port:
        try:
            return StoreExchange(ctx, tag=f"{zlib.crc32(Path(run_dir).name.encode()):08x}")
        except (RuntimeError, ValueError, OSError):
            pass
    return FileExchange(run_dir)
