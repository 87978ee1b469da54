"""A PyTorch loop that never pauses, for the kill tests (tests/gpu/kill_test.py).

Each step launches elementwise and reduction kernels (one kernel per op) and synchronizes
once, as a training step reading its loss does, then prints 'completed N T': N kernels issued
so far, all finished (the step synchronized), T seconds since the first launch. Every 50 steps
the tensor size changes, so new kernel signatures keep appearing and the achieved-occupancy
sampler keeps measuring during the run. Runs until killed.
"""
import sys
import time

import torch

x = torch.zeros(1 << 16, device="cuda")
torch.cuda.synchronize()
launched = 1  # the zeros fill
sizes = [1 << 14, 1 << 16, 1 << 18, 3 << 16, 5 << 15, 1 << 20]
first = None
step = 0
while True:
    n = sizes[(step // 50) % len(sizes)]
    a = torch.ones(n, device="cuda")          # 1 fill
    launched += 1
    for _ in range(20):
        a.add_(1.0)                            # 1 elementwise each
        a.mul_(0.5)
    launched += 40
    s = a.sum()                                # 1 reduction
    launched += 1
    s.item()                                   # synchronize, as reading a loss does
    if first is None:
        first = time.monotonic()
    step += 1
    sys.stdout.write(f"completed {launched} {time.monotonic() - first:.4f}\n")
    sys.stdout.flush()
