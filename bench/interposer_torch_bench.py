#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A launch-bound PyTorch MLP + Adam training loop under libcuclimb.so.

--mode overhead: alternates blocks of iterations with recording paused (cuclimb_pause) and
    resumed, in one process, and prints the step-time statistics of both as one JSON line.
    Without cuclimb every block is "untraced".
--mode check: trains --iters iterations and prints what PyTorch says about its memory (reserved,
    allocated), so the trace can be checked against it (scripts/gpu-interposer.sh).
--profiler N: in check mode, runs torch.profiler (CPU + CUDA activities) for N iterations in the
    middle, then marks "profiler-end" in NVTX: the trace shows whether cuclimb's activity records
    continue after another CUPTI client came and went.
--memory-history python|all: instead of pausing cuclimb, alternates blocks with PyTorch's own
    memory history on (torch.cuda.memory._record_memory_history(stacks=...)) and off: the same
    in-process A/B for the tool users compare cuclimb with (run it without cuclimb).
--keep-losses: appends every loss tensor to a list (a realistic accumulator: the list keeps
    each iteration's loss alive), as in the issue's PyTorch reproduction.
Each iteration is one NVTX range "iteration" (torch.cuda.nvtx), as a user would mark it.
"""
import argparse
import ctypes
import json
import os
import statistics
import sys
import time

import torch


def cuclimb_api():
    lib = os.environ.get("CUDA_INJECTION64_PATH")
    if not lib:
        return None
    try:
        handle = ctypes.CDLL(lib, mode=os.RTLD_NOLOAD | os.RTLD_NOW)
        handle.cuclimb_pause.restype = None
        handle.cuclimb_resume.restype = None
        return handle
    except OSError:
        return None


class memory_history_switch:  # noqa: N801 - stands in for the cuclimb library handle
    """cuclimb_pause/cuclimb_resume lookalikes that turn PyTorch's memory history off and on."""

    def __init__(self, stacks):
        self.stacks = stacks

    def cuclimb_resume(self):
        torch.cuda.memory._record_memory_history(enabled="all", stacks=self.stacks)

    def cuclimb_pause(self):
        torch.cuda.memory._record_memory_history(enabled=None)


def build(width, depth, device):
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1)).to(device)
    return model, torch.optim.Adam(model.parameters(), lr=1e-3)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--mode", choices=["overhead", "check"], default="overhead")
    p.add_argument("--iters", type=int, default=1200)
    p.add_argument("--block", type=int, default=50)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--depth", type=int, default=6)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--profiler", type=int, default=0)
    p.add_argument("--label", default="run")
    p.add_argument("--no-pause", action="store_true", help="never pause (whole-process runs)")
    p.add_argument("--memory-history", choices=["python", "all"], default=None)
    p.add_argument("--keep-losses", action="store_true")
    args = p.parse_args()

    device = torch.device("cuda")
    torch.cuda.init()
    model, opt = build(args.width, args.depth, device)
    x = torch.randn(args.batch, args.width, device=device)
    target = torch.randn(args.batch, 1, device=device)
    step_no = 0
    losses = []

    def step():
        nonlocal step_no
        step_no += 1
        torch.cuda.nvtx.range_push("iteration")
        loss = torch.nn.functional.mse_loss(model(x), target)
        if args.keep_losses:
            losses.append(loss)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        torch.cuda.nvtx.range_pop()
        torch.cuda.synchronize()

    for _ in range(50):  # warm-up: allocator segments, cuBLAS handles, lazy modules
        step()

    api = None if args.no_pause else cuclimb_api()
    if args.memory_history is not None:
        api = memory_history_switch(args.memory_history)
    if args.mode == "check":
        half = args.iters // 2
        for _ in range(half):
            step()
        if args.profiler > 0:
            from torch.profiler import ProfilerActivity, profile

            with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
                for _ in range(args.profiler):
                    step()
            cuda_events = sum(1 for e in prof.events() if e.device_type.name == "CUDA")
            torch.cuda.nvtx.mark("profiler-end")
        for _ in range(args.iters - half):
            step()
        torch.cuda.synchronize()
        out = {
            "label": args.label,
            "iterations": step_no,
            "reserved": torch.cuda.memory_reserved(),
            "allocated": torch.cuda.memory_allocated(),
            "max_reserved": torch.cuda.max_memory_reserved(),
            "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""),
            "torch": torch.__version__,
            "traced": api is not None,
        }
        if args.profiler > 0:
            out["profiler_cuda_events"] = cuda_events
        print(json.dumps(out), flush=True)
        return 0

    on, off, ratios = [], [], []
    last_off = None
    blocks = max(2, args.iters // args.block)
    for b in range(blocks):
        recording = api is None or b % 2 == 1
        if api is not None:
            (api.cuclimb_resume if recording else api.cuclimb_pause)()
        times = []
        for _ in range(args.block):
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
        (on if recording else off).extend(times)
        m = statistics.median(times)
        if api is not None and not recording:
            last_off = m
        elif api is not None and last_off:
            ratios.append(m / last_off)
    if api is not None:
        api.cuclimb_resume()

    def stats(v):
        if not v:
            return None
        q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0]] * 3
        return {"median_us": statistics.median(v) * 1e6, "p25_us": q[0] * 1e6,
                "p75_us": q[2] * 1e6, "n": len(v)}

    out = {"label": args.label, "traced": api is not None, "recording": stats(on),
           "paused": stats(off)}
    if ratios:
        q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
        out["block_ratio"] = {"median": statistics.median(ratios), "p25": q[0], "p75": q[2],
                              "n": len(ratios)}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
