#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A CuPy loop without NVTX, for recording under cuclimb on a GPU: a small MLP forward and an
SGD-like update with cuBLAS matrix products (cuBLAS emits NVTX ranges of its own, several per
loop iteration). --leak keeps one array per iteration alive (a growing list), from --leak-from.
Prints one summary JSON line."""
import argparse
import json
import sys
import time

import cupy as cp


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=600)
    p.add_argument("--width", type=int, default=1024)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--leak", action="store_true")
    p.add_argument("--leak-from", type=int, default=0)
    args = p.parse_args()
    rng = cp.random.default_rng(0)
    ws = [rng.standard_normal((args.width, args.width), dtype=cp.float32) * 0.02 for _ in range(4)]
    x = rng.standard_normal((args.batch, args.width), dtype=cp.float32)
    kept, times = [], []
    for it in range(args.iters):
        t0 = time.perf_counter()
        h = x
        acts = []
        for w in ws:
            h = cp.maximum(h @ w, 0)
            acts.append(h)
        g = h
        for w, a in zip(reversed(ws), reversed(acts)):
            grad_w = a.T @ g
            w -= 1e-4 * grad_w
            g = (g @ w.T) * (a > 0)
        if args.leak and it >= args.leak_from:
            kept.append(cp.ascontiguousarray(acts[-1][:8]))
        cp.cuda.Device().synchronize()
        times.append(time.perf_counter() - t0)
    tenth = max(1, len(times) // 10)
    first, last = sorted(times[:tenth])[tenth // 2], sorted(times[-tenth:])[tenth // 2]
    pool = cp.get_default_memory_pool()
    print(json.dumps({"program": "cupy_loop", "iters": args.iters, "first_ms": first * 1e3,
                      "last_ms": last * 1e3, "change_pct": 100 * (last / first - 1),
                      "pool_total": pool.total_bytes(), "pool_used": pool.used_bytes(),
                      "kept": len(kept), "cupy": cp.__version__}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
