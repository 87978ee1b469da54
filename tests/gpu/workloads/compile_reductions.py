"""torch.compile on a model whose reductions have small grids: per-sample statistics over a small
batch (a few programs each, far under one wave), a row-wise RMS norm over few rows, and a
column sum, beside one large pointwise epilogue. Inductor writes Triton reductions whose grid is
set by XBLOCK/RBLOCK and the tensor shapes, and num_warps sets their threads: occ-report must
not advise occupancy for sub-wave grids, and must speak in those knobs.

Environment: STEPS (default 200), BATCH (default 8).
"""
import os

import torch
import torch.nn as nn

torch.manual_seed(0)


class SmallReductions(nn.Module):
    def __init__(self, d=768):
        super().__init__()
        self.proj = nn.Linear(d, d)
        self.gain = nn.Parameter(torch.ones(d))

    def forward(self, x):
        # x: (batch, tokens, d); batch is small, so per-sample reductions launch few programs.
        h = self.proj(x)
        rms = h.pow(2).mean(dim=-1, keepdim=True).add(1e-6).rsqrt()  # rows = batch * tokens
        h = h * rms * self.gain
        per_sample = h.abs().amax(dim=(1, 2))                          # batch programs
        col = h.sum(dim=1)                                             # (batch, d)
        return (torch.tanh(h).mean() + per_sample.mean() + col.var(dim=-1).mean())


batch = int(os.environ.get("BATCH", "8"))
model = SmallReductions().cuda()
opt = torch.optim.SGD(model.parameters(), lr=1e-3)
compiled = torch.compile(model)
x = torch.randn(batch, 64, 768, device="cuda")
for step in range(int(os.environ.get("STEPS", "200"))):
    loss = compiled(x)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print(f"loss {loss.item():.4f}")
