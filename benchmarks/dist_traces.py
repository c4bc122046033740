"""Synthetic per-rank traces of a data-parallel job, shaped like torch 2.11's Kineto traces on GPUs,
with a known straggler and a known rank-0 sync: the test data of benchmarks/dist_scale.py and
benchmarks/dist_hta.py (and tests/test_benchmarks_smoke.py).

Each rank's step: `ops` forward/backward ops (a cpu_op with its cudaLaunchKernel and the kernel it
launches), then `collectives` NCCL allreduce kernels on their own stream. Every rank starts each
step at the same time (the previous step's collectives end everywhere at once); the straggler
does `straggler_us` of extra host work first, and rank `item_rank` reads a value with `.item()`
(a device-to-host copy and a stream sync) before its collectives. A rank's first allreduce
starts when its host launches it; all ranks' end together once the last rank has arrived, so its
duration is the wait for the last rank plus the transfer. The truth is returned beside the traces.

    python benchmarks/dist_traces.py OUT_DIR --ranks 8     # writes OUT_DIR/rank<R>.pt.trace.json.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
from dataclasses import dataclass
from pathlib import Path

LAUNCH_US = 5.0     # cudaLaunchKernel
OP_US = 12.0        # host time of an op, its launch included
KERNEL_US = 10.0    # each op's kernel (the GPU keeps up with the host)
TRANSFER_US = 150.0  # an allreduce once every rank has arrived
ITEM_BLOCK_US = 40.0  # the sync's own time once the queue has drained
NCCL_KERNEL = {"dev": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",
               "legacy": "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)"}


@dataclass(frozen=True)
class Shape:
    ranks: int = 8
    steps: int = 8
    ops: int = 200
    collectives: int = 4
    straggler: int = 1
    straggler_us: float = 2000.0
    item_rank: int = 0
    # NCCL's kernel names: "dev" (ncclDevKernel_*, NCCL 2.19 and later, what torch 2.11 ships) or
    # "legacy" (ncclKernel_*, older NCCL)
    nccl_names: str = "dev"


def _arrival(shape: Shape, rank: int) -> float:
    """When a rank's host launches its first allreduce, from the step's start."""
    t = shape.ops * OP_US
    if rank == shape.straggler:
        t += shape.straggler_us
    if rank == shape.item_rank:
        t += ITEM_BLOCK_US + LAUNCH_US  # the queue drains with the last op, then the sync returns
    return t


def step_us(shape: Shape) -> float:
    last = max(_arrival(shape, r) for r in range(shape.ranks))
    return last + shape.collectives * TRANSFER_US + 50.0


def truth(shape: Shape) -> dict:
    """What an analysis should find: each rank's wait per step (ms) in the collectives, the straggler."""
    last = max(_arrival(shape, r) for r in range(shape.ranks))
    return {"wait_ms_per_step": [round((last - _arrival(shape, r)) / 1000, 4) for r in range(shape.ranks)],
            "straggler": max(range(shape.ranks), key=lambda r: _arrival(shape, r)),
            "item_rank": shape.item_rank, "step_ms": step_us(shape) / 1000}


def rank_trace(shape: Shape, rank: int) -> dict:
    events: list[dict] = []
    pid, tid, dev = 1000 + rank, 1000 + rank, rank % 8
    ext = corr = 0
    length = step_us(shape)
    last = max(_arrival(shape, r) for r in range(shape.ranks))

    def x(cat, name, ts, dur, p, t, args):
        events.append({"ph": "X", "cat": cat, "name": name, "pid": p, "tid": t, "ts": round(ts, 3),
                       "dur": round(dur, 3), "args": args})

    for k in range(shape.steps):
        s = 1_000_000.0 + k * length
        ext += 1
        x("user_annotation", f"ProfilerStep#{k + 1}", s, length, pid, tid, {"External id": ext})
        t = s + (shape.straggler_us if rank == shape.straggler else 0.0)
        gpu = s
        for i in range(shape.ops):
            ext += 1
            corr += 1
            x("cpu_op", "aten::mm" if i % 2 else "aten::add", t, OP_US, pid, tid, {"External id": ext})
            x("cuda_runtime", "cudaLaunchKernel", t + 2, LAUNCH_US, pid, tid,
              {"External id": ext, "correlation": corr, "cbid": 211})
            gpu = max(gpu, t + 2 + LAUNCH_US + 1)
            x("kernel", "void gemm_kernel<float>(float*)", gpu, KERNEL_US, dev, 7,
              {"External id": ext, "correlation": corr, "device": dev, "stream": 7})
            gpu += KERNEL_US
            t += OP_US
        if rank == shape.item_rank:
            ext += 1
            corr += 1
            x("cpu_op", "aten::item", t, ITEM_BLOCK_US + LAUNCH_US, pid, tid, {"External id": ext})
            x("cpu_op", "aten::_local_scalar_dense", t + 0.5, ITEM_BLOCK_US + LAUNCH_US - 1, pid, tid,
              {"External id": ext + 100000})
            x("cuda_runtime", "cudaMemcpyAsync", t + 1, 2, pid, tid,
              {"External id": ext + 100000, "correlation": corr, "cbid": 41})
            x("gpu_memcpy", "Memcpy DtoH (Device -> Pinned)", max(gpu, t + 3), 1, dev, 7,
              {"correlation": corr, "device": dev, "stream": 7, "bytes": 4})
            corr += 1
            x("cuda_runtime", "cudaStreamSynchronize", t + 3, ITEM_BLOCK_US, pid, tid,
              {"External id": ext + 100000, "correlation": corr, "cbid": 131})
            t += ITEM_BLOCK_US + LAUNCH_US
        host = s + _arrival(shape, rank) - LAUNCH_US - 2  # the launch of the first collective
        first_end = s + last + TRANSFER_US
        for c in range(shape.collectives):
            ext += 1
            corr += 1
            x("cpu_op", "record_param_comms", host, LAUNCH_US + 1, pid, tid,
              {"External id": ext, "Collective name": "allreduce"})
            x("cuda_runtime", "cudaLaunchKernel", host + 0.5, LAUNCH_US, pid, tid,
              {"External id": ext, "correlation": corr, "cbid": 211})
            # the first one waits for the last rank; the rest follow it on the stream, aligned everywhere
            start = s + _arrival(shape, rank) if c == 0 else first_end + (c - 1) * TRANSFER_US
            done = first_end + c * TRANSFER_US
            x("kernel", NCCL_KERNEL[shape.nccl_names], start, done - start, dev, 20,
              {"External id": ext, "correlation": corr, "device": dev, "stream": 20, "Collective name": "allreduce",
               "Process Group Name": "0", "Group size": shape.ranks})
            host += LAUNCH_US + 2
    return {
        "schemaVersion": 1,
        "deviceProperties": [{"id": dev, "name": "NVIDIA H100 80GB HBM3 (synthetic)", "totalGlobalMem": 85e9,
                              "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                              "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536,
                              "regsPerMultiprocessor": 65536, "warpSize": 32, "sharedMemPerBlock": 49152,
                              "sharedMemPerMultiprocessor": 233472, "numSms": 132,
                              "sharedMemPerBlockOptin": 232448}],
        "distributedInfo": {"backend": "nccl", "rank": rank, "world_size": shape.ranks},
        "baseTimeNanoseconds": 1_700_000_000_000_000_000,
        "traceEvents": events,
    }


def write_ranks(out: Path, shape: Shape, gz: bool = True) -> list[Path]:
    """One trace per rank in `out`, named as torch's tensorboard_trace_handler names them."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in range(shape.ranks):
        # `"rank": 0` with a space, as torch writes it (HolisticTraceAnalysis finds ranks by that text)
        data = json.dumps(rank_trace(shape, r), separators=(",", ": ")).encode()
        p = out / f"rank{r}.{1000 + r}.pt.trace.json{'.gz' if gz else ''}"
        p.write_bytes(gzip.compress(data, compresslevel=1) if gz else data)
        paths.append(p)
    return paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", type=Path)
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--ops", type=int, default=200)
    ap.add_argument("--collectives", type=int, default=4)
    a = ap.parse_args()
    shape = Shape(a.ranks, a.steps, a.ops, a.collectives)
    write_ranks(a.out, shape)
    print(json.dumps(truth(shape)))


if __name__ == "__main__":
    main()
