#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A PyTorch training loop shaped like real ones, for recording under cuclimb on a GPU.

The default is the motivating report's pattern and is flat by design: a persistent MLP trained
with Adam, and a second MLP with a fresh Adam built, trained for a few steps and dropped in every
outer iteration (PyTorch's caching allocator recycles its memory). Options turn on the growth
that real programs show, and the irregular iterations they have:

  --keep-losses        the classic bug: every iteration a validation loss is computed with
                       autograd on and appended to a list, keeping its graph and saved
                       activations alive (about 1 MiB per iteration at the default sizes)
  --hook-per-iter      register one more gradient hook on the persistent net every iteration
  --leak-from-iter K   start --keep-losses at iteration K (a leak introduced mid-run)
  --grad-accum K       the persistent optimizer steps only every K-th iteration
  --eval-every N, --checkpoint-every N, --gc-every N   slow iterations, as in real loops
  --no-nvtx            no NVTX ranges at all (iterations must be found otherwise)

NVTX: one range "iteration" per outer iteration, with "A/fwd", "A/bwd", "A/step" around the
persistent net's phases and "B/train" around the ephemeral net. Backward runs on the autograd
engine's own thread, as in every PyTorch program. Prints one summary JSON line at the end.
"""
import argparse
import gc
import json
import os
import sys
import tempfile
import time

import torch


def build(width, depth, device, seed):
    torch.manual_seed(seed)
    layers = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1)).to(device)
    return model, torch.optim.Adam(model.parameters(), lr=1e-3)


class Nvtx:
    def __init__(self, enabled):
        self.enabled = enabled

    def push(self, name):
        if self.enabled:
            torch.cuda.nvtx.range_push(name)

    def pop(self):
        if self.enabled:
            torch.cuda.nvtx.range_pop()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=600)
    p.add_argument("--width", type=int, default=512)
    p.add_argument("--depth", type=int, default=4)
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--inner", type=int, default=4, help="ephemeral net's steps per iteration")
    p.add_argument("--no-ephemeral", action="store_true")
    p.add_argument("--keep-losses", action="store_true")
    p.add_argument("--leak-from-iter", type=int, default=0)
    p.add_argument("--hook-per-iter", action="store_true")
    p.add_argument("--grad-accum", type=int, default=1)
    p.add_argument("--eval-every", type=int, default=0)
    p.add_argument("--checkpoint-every", type=int, default=0)
    p.add_argument("--gc-every", type=int, default=0)
    p.add_argument("--no-nvtx", action="store_true")
    args = p.parse_args()

    device = torch.device("cuda")
    nvtx = Nvtx(not args.no_nvtx)
    model, opt = build(args.width, args.depth, device, 0)
    x = torch.randn(args.batch, args.width, device=device)
    y = torch.randn(args.batch, 1, device=device)
    x_val = torch.randn(args.batch, args.width, device=device)
    kept = []
    hooks = []
    ckpt_dir = tempfile.mkdtemp(prefix="cuclimb-ckpt-")
    times = []

    for it in range(args.iters):
        t0 = time.perf_counter()
        nvtx.push("iteration")
        nvtx.push("A/fwd")
        loss = torch.nn.functional.mse_loss(model(x), y)
        nvtx.pop()
        nvtx.push("A/bwd")
        loss.backward()
        nvtx.pop()
        if (it + 1) % args.grad_accum == 0:
            nvtx.push("A/step")
            opt.step()
            opt.zero_grad(set_to_none=True)
            nvtx.pop()
        if args.keep_losses and it >= args.leak_from_iter:
            # The bug: no torch.no_grad(), and the tensor (not .item()) is kept.
            kept.append(torch.nn.functional.mse_loss(model(x_val), y))
        if args.hook_per_iter:
            w = model[0].weight
            hooks.append(w.register_hook(lambda g: None))  # host work per hook, no CUDA
        if not args.no_ephemeral:
            nvtx.push("B/train")
            eph, eph_opt = build(args.width, args.depth, device, it + 1)
            for _ in range(args.inner):
                l2 = torch.nn.functional.mse_loss(eph(x), y)
                eph_opt.zero_grad(set_to_none=True)
                l2.backward()
                eph_opt.step()
            del eph, eph_opt, l2
            nvtx.pop()
        if args.eval_every and it % args.eval_every == args.eval_every - 1:
            nvtx.push("eval")
            with torch.no_grad():
                for _ in range(20):
                    model(torch.randn(args.batch * 4, args.width, device=device))
            nvtx.pop()
        if args.checkpoint_every and it % args.checkpoint_every == args.checkpoint_every - 1:
            nvtx.push("checkpoint")
            torch.save({"model": model.state_dict(), "opt": opt.state_dict()},
                       os.path.join(ckpt_dir, "ckpt.pt"))
            nvtx.pop()
        if args.gc_every and it % args.gc_every == args.gc_every - 1:
            gc.collect()
        nvtx.pop()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)

    tenth = max(1, len(times) // 10)
    first = sorted(times[:tenth])[tenth // 2]
    last = sorted(times[-tenth:])[tenth // 2]
    print(json.dumps({
        "program": "torch_train", "iters": args.iters, "first_ms": first * 1e3,
        "last_ms": last * 1e3, "change_pct": 100 * (last / first - 1),
        "reserved": torch.cuda.memory_reserved(), "allocated": torch.cuda.memory_allocated(),
        "kept": len(kept), "hooks": len(hooks),
        "alloc_conf": os.environ.get("PYTORCH_CUDA_ALLOC_CONF", ""), "torch": torch.__version__,
    }), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
