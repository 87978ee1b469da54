"""Triton workload for the GPU tests: one @triton.jit kernel, launched LAUNCHES times.

Prints 'triton launches N grid G block B' (block = num_warps * 32 threads).
"""
import os

import torch
import triton
import triton.language as tl

LAUNCHES = int(os.environ.get("LAUNCHES", "5"))
N, BLOCK_SIZE, NUM_WARPS = 1 << 16, 1024, 4


@triton.jit
def occ_triton_add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK_SIZE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


x = torch.ones(N, device="cuda")
y = torch.full((N,), 2.0, device="cuda")
out = torch.empty_like(x)
grid = (triton.cdiv(N, BLOCK_SIZE),)
for _ in range(LAUNCHES):
    occ_triton_add_kernel[grid](x, y, out, N, BLOCK_SIZE=BLOCK_SIZE, num_warps=NUM_WARPS)
torch.cuda.synchronize()
print(f"triton launches {LAUNCHES} grid {grid[0]} block {NUM_WARPS * 32} sum {out.sum().item():.1f}")
