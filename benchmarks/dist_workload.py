"""A DDP training script with a straggler and a rank-0 sync, for benchmarks/dist_gpu.py (run it
under torchrun, or under `syncscan profile --nproc-per-node N`).

Each step: the host prepares the batch (--host-ms of host work, as a data loader's collate and
augmentation would be; it overlaps the GPU's previous step unless something made the host wait),
then forward, backward (DDP's allreduce) and the optimizer step on an MLP of --depth layers of
--width. `--slow-rank R --slow-ms X`: rank R does X ms more host work per step (the straggler).
Rank 0 reads the loss with `.item()` after each step to print it (the classic rank-0 logging
sync); `--no-log`: it does not.

    torchrun --nproc-per-node 2 benchmarks/dist_workload.py --device cuda --backend nccl
"""

from __future__ import annotations

import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--backend", default="gloo")
    ap.add_argument("--device", default="cpu", help="cpu, cuda (each rank its own GPU), cuda:0 (all on one)")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--width", type=int, default=1024)
    ap.add_argument("--depth", type=int, default=8)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--host-ms", type=float, default=3.0)
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-ms", type=float, default=0.0)
    ap.add_argument("--log", action=argparse.BooleanOptionalAction, default=True)
    a = ap.parse_args()

    dist.init_process_group(a.backend)
    rank = dist.get_rank()
    if a.device == "cuda":
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", 0)))
        torch.cuda.set_device(device)
    else:
        device = torch.device(a.device)
    torch.manual_seed(rank)
    layers = []
    for _ in range(a.depth):
        layers += [torch.nn.Linear(a.width, a.width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).to(device)
    ddp = DDP(model, device_ids=[device.index] if device.type == "cuda" else None)
    opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
    for step in range(a.steps):
        time.sleep(a.host_ms / 1e3)  # the batch's host work
        if rank == a.slow_rank:
            time.sleep(a.slow_ms / 1e3)
        x = torch.randn(a.batch, a.width, device=device)
        loss = ddp(x).pow(2).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if rank == 0 and a.log:
            print(f"step {step} loss {loss.item():.5f}", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
