"""torch.compile on a small transformer-style block: TorchInductor generates Triton kernels
(pointwise, reductions, persistent reductions) for the forward and backward passes. For
occ-report's Triton advice and the Triton compile metadata in the trace.

Environment: STEPS (default 30), MODE (torch.compile mode; default "default").
"""
import os

import torch
import torch.nn as nn

import torchprof  # noqa: E402 (beside this file): TORCHPROF=1 profiles the steps after the first 3

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d=512, hidden=2048):
        super().__init__()
        self.norm1 = nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, 8, batch_first=True)
        self.norm2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, hidden), nn.GELU(), nn.Linear(hidden, d))

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        x = x + self.mlp(self.norm2(x))
        return torch.softmax(x, dim=-1).sum(dim=1)


model = Block().cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
compiled = torch.compile(model, mode=os.environ.get("MODE", "default"))
x = torch.randn(32, 128, 512, device="cuda")
prof = None
for i in range(int(os.environ.get("STEPS", "30"))):
    if i == 3:  # compiled by now: profile the steady steps only
        torch.cuda.synchronize()
        prof = torchprof.from_environment()
        if prof is not None:
            prof.__enter__()
    opt.zero_grad(set_to_none=True)
    loss = compiled(x).square().mean()
    loss.backward()
    opt.step()
torch.cuda.synchronize()
if prof is not None:
    prof.__exit__(None, None, None)
    torchprof.export(prof)
print(f"compiled loss {loss.item():.5f}")
