"""Deterministic PyTorch program: its stdout must be identical traced and untraced, and its exit
status (EXIT_CODE, default 5) must come through occtrace unchanged."""
import os
import sys

import torch

torch.manual_seed(1234)
a = torch.randn(256, 256, device="cuda", dtype=torch.float64)
b = torch.randn(256, 256, device="cuda", dtype=torch.float64)
for i in range(5):
    c = (a @ b).relu_() / 256.0
    print(f"step {i} sum {c.sum().item():.6f} max {c.max().item():.6f}")
    a = c + a
print("done")
sys.exit(int(os.environ.get("EXIT_CODE", "5")))
