#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A PyTorch DDP training loop where one rank alone keeps every loss tensor, for recording a
multi-rank job under cuclimb on GPUs:

    cuclimb record --output 'runs/rank%r-%p.trace' -- \\
        torchrun --nproc-per-node 2 tests/programs/ddp_keep_losses.py --keep-losses-rank 1

Every rank trains the same MLP with Adam under DistributedDataParallel (gradients all-reduced
at every backward, on the collective backend's own streams). With --keep-losses-rank R, rank R
also computes a validation loss with autograd on every iteration and appends the tensor to a
list, keeping its graph and saved activations alive (the classic bug); its memory grows and, if
its steps slow down, the other ranks wait for it at the next all-reduce. Without the option the
run is flat on every rank.

Backend: NCCL when every rank has a GPU of its own; with fewer GPUs than ranks (two ranks
sharing one H200) NCCL refuses two ranks on one device, so gloo (it all-reduces CUDA tensors
too). NVLink multicast stays off whatever the caller's environment says (the machine's rule).

NVTX: one range "iteration" per step, with "fwd", "bwd" (the all-reduce runs inside it),
"step" and "keep" inside. Each rank prints one JSON summary line at the end.
"""
import argparse
import json
import os
import sys
import time

# Before torch.distributed or NCCL read them; never unset (the machine's rule).
os.environ["NCCL_NVLS_ENABLE"] = "0"
os.environ["TORCH_SYMM_MEM_DISABLE_MULTICAST"] = "1"
os.environ["NVSHMEM_DISABLE_NVLS"] = "1"

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch.nn.parallel import DistributedDataParallel  # noqa: E402


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--iters", type=int, default=400)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--keep-losses-rank", type=int, default=-1,
                   help="this rank alone keeps every validation loss tensor (default: none)")
    p.add_argument("--backend", choices=["auto", "nccl", "gloo"], default="auto")
    p.add_argument("--eval-every", type=int, default=0,
                   help="a slower iteration every N (no_grad evaluation), as in real loops")
    return p.parse_args(argv)


def choose_backend(requested, world_size, gpus):
    """NCCL needs one device per rank; ranks sharing a GPU go through gloo."""
    if requested != "auto":
        return requested
    return "nccl" if gpus >= world_size else "gloo"


class Nvtx:
    def push(self, name):
        torch.cuda.nvtx.range_push(name)

    def pop(self):
        torch.cuda.nvtx.range_pop()


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if xs else float("nan")


def main(argv):
    args = parse(argv)
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", str(rank)))
    gpus = torch.cuda.device_count()
    if gpus == 0:
        print(json.dumps({"program": "ddp_keep_losses", "rank": rank, "error": "no GPU"}))
        return 77
    device = torch.device("cuda", local % gpus)
    torch.cuda.set_device(device)
    backend = choose_backend(args.backend, world, gpus)
    if backend == "nccl":
        try:  # device_id (torch >= 2.3) binds the communicator to this rank's GPU at once
            dist.init_process_group(backend=backend, device_id=device)
        except TypeError:
            dist.init_process_group(backend=backend)
    else:
        dist.init_process_group(backend=backend)

    torch.manual_seed(0)  # the same initial weights on every rank
    layers = []
    for _ in range(args.depth):
        layers += [torch.nn.Linear(args.width, args.width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(args.width, 1)).to(device)
    ddp = DistributedDataParallel(model, device_ids=[device.index])
    opt = torch.optim.Adam(ddp.parameters(), lr=1e-4)
    torch.manual_seed(1 + rank)  # each rank its own data shard
    x = torch.randn(args.batch, args.width, device=device)
    y = torch.randn(args.batch, 1, device=device)
    x_val = torch.randn(args.batch, args.width, device=device)
    keeps = rank == args.keep_losses_rank
    kept = []
    nvtx = Nvtx()
    times = []

    for it in range(args.iters):
        t0 = time.perf_counter()
        nvtx.push("iteration")
        nvtx.push("fwd")
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        nvtx.pop()
        nvtx.push("bwd")
        loss.backward()  # DDP's reducer all-reduces the gradient buckets here
        nvtx.pop()
        nvtx.push("step")
        opt.step()
        opt.zero_grad(set_to_none=True)
        nvtx.pop()
        if keeps:
            nvtx.push("keep")
            # The bug: no torch.no_grad(), and the tensor (not .item()) is kept. The module
            # itself, not the DDP wrapper: a forward through DDP would expect a backward.
            kept.append(torch.nn.functional.mse_loss(model(x_val), y))
            nvtx.pop()
        if args.eval_every and it % args.eval_every == args.eval_every - 1:
            nvtx.push("eval")
            with torch.no_grad():
                for _ in range(10):
                    model(torch.randn(args.batch * 2, args.width, device=device))
            nvtx.pop()
        nvtx.pop()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)

    dist.barrier()
    tenth = max(1, len(times) // 10)
    first, last = median(times[:tenth]), median(times[-tenth:])
    print(json.dumps({
        "program": "ddp_keep_losses", "rank": rank, "world_size": world, "backend": backend,
        "device": device.index, "iters": args.iters, "keeps_losses": keeps, "kept": len(kept),
        "first_ms": round(first * 1e3, 3), "last_ms": round(last * 1e3, 3),
        "change_pct": round(100 * (last / first - 1), 2),
        "reserved": torch.cuda.memory_reserved(device),
        "allocated": torch.cuda.memory_allocated(device), "torch": torch.__version__,
    }), flush=True)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
