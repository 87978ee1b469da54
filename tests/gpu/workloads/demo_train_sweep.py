"""The bundled example (scripts/demo.sh, #29 item 7): a user's PyTorch training loop (STEPS
steps, default 100) beside the user's own CuPy RawKernels, swept over block sizes (1-D) and
block shapes (2-D) over the same work, LAUNCHES times each (default 20). The report should give
the user's kernels measured advice and leave PyTorch's, cuDNN's and cuBLAS's kernels to them.
Prints the training loss and one line per kernel and shape: 'demo KERNEL block B: MEAN us'.
"""
import os

import cupy as cp
import torch
import torch.nn as nn

STEPS = int(os.environ.get("STEPS", "100"))
LAUNCHES = int(os.environ.get("LAUNCHES", "20"))

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(),
    nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(64 * 16 * 16, 256), nn.ReLU(), nn.Linear(256, 10)).cuda()
opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
xb = torch.randn(64, 3, 32, 32, device="cuda")
yb = torch.randint(0, 10, (64,), device="cuda")
for _ in range(STEPS):
    opt.zero_grad(set_to_none=True)
    loss = nn.functional.cross_entropy(model(xb), yb)
    loss.backward()
    opt.step()
torch.cuda.synchronize()
print(f"demo train {STEPS} steps loss {loss.item():.4f}")

# The user's own preprocessing kernels, written in CUDA C++ through CuPy.
normalize = cp.RawKernel(r'''
extern "C" __global__ void normalize(const float* x, float* y, float mean, float inv_std, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = (x[i] - mean) * inv_std;
}''', "normalize")
box_filter = cp.RawKernel(r'''
extern "C" __global__ void box_filter(const float* in, float* out, int h, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x < 2 || y < 2 || x >= w - 2 || y >= h - 2) return;
  float s = 0.f;
  for (int dy = -2; dy <= 2; ++dy)
    for (int dx = -2; dx <= 2; ++dx) s += in[(y + dy) * w + (x + dx)];
  out[y * w + x] = s * (1.f / 25.f);
}''', "box_filter")


def timed(label, launch):
    launch()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(LAUNCHES):
        launch()
    end.record()
    end.synchronize()
    print(f"demo {label}: {1000 * cp.cuda.get_elapsed_time(start, end) / LAUNCHES:.2f} us")


N, H, W = 1 << 24, 4096, 4096
x = cp.random.standard_normal(N, dtype=cp.float32)
y = cp.empty_like(x)
for block in (32, 64, 128, 256, 512, 1024):
    grid = ((N + block - 1) // block,)
    timed(f"normalize block {block}",
          lambda: normalize(grid, (block,), (x, y, cp.float32(0.5), cp.float32(2.0), cp.int32(N))))
img = x.reshape(H, W)
out = cp.zeros_like(img)
for bx, by in ((32, 8), (16, 16), (8, 32), (4, 64), (64, 4)):
    grid = ((W + bx - 1) // bx, (H + by - 1) // by)
    timed(f"box_filter block ({bx}, {by})",
          lambda: box_filter(grid, (bx, by), (img, out, cp.int32(H), cp.int32(W))))
cp.cuda.Device().synchronize()
