"""A Triton user's `@triton.autotune` kernel: 4 configs (BLOCK x num_warps); the autotuner
benchmarks each on the first call, then its choice runs LAUNCHES times (default 200). For #29:
the trial launches are autotuning, and the chosen variant gets advice only in the autotuner's
terms. A memory-bound op (softplus-scaled add over 32 M floats).
Prints 'triton autotune best CONFIG launches N'.
"""
import os

import torch
import triton
import triton.language as tl

LAUNCHES = int(os.environ.get("LAUNCHES", "200"))
N = 1 << 25


@triton.autotune(
    configs=[
        triton.Config({"BLOCK": 1024}, num_warps=2),
        triton.Config({"BLOCK": 1024}, num_warps=4),
        triton.Config({"BLOCK": 2048}, num_warps=4),
        triton.Config({"BLOCK": 4096}, num_warps=8),
    ],
    key=["n"],
)
@triton.jit
def softplus_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    sp = tl.where(x > 20.0, x, tl.log(1.0 + tl.exp(x)))
    tl.store(out_ptr + offs, sp + y, mask=mask)


x = torch.randn(N, device="cuda")
y = torch.randn(N, device="cuda")
out = torch.empty_like(x)
grid = lambda meta: (triton.cdiv(N, meta["BLOCK"]),)  # noqa: E731
for _ in range(LAUNCHES):
    softplus_add[grid](x, y, out, N)
torch.cuda.synchronize()
print(f"triton autotune best {softplus_add.best_config} launches {LAUNCHES} "
      f"check {float((out - (torch.nn.functional.softplus(x) + y)).abs().max()):.2e}")
