"""A CuPy user's block-size experiment: two RawKernels over the same work, each launched at
several block shapes (LAUNCHES times each, default 20), beside CuPy's own kernels (cupy.random,
elementwise arithmetic, a user ElementwiseKernel, reductions). For #29: measured advice for the
user's RawKernels (the same function at different configurations, 1-D and 2-D blocks) and
CuPy's own kernels owned by CuPy.
Prints one line per kernel and shape: 'cupy KERNEL block B: MEAN us' (CUDA events).
"""
import os

import cupy as cp

LAUNCHES = int(os.environ.get("LAUNCHES", "20"))
N = 1 << 24          # 1-D: 16 M floats
H, W = 4096, 4096    # 2-D: 16 M floats

scale_add = cp.RawKernel(r'''
extern "C" __global__ void scale_add(const float* x, float* y, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}''', "scale_add")

blur2d = cp.RawKernel(r'''
extern "C" __global__ void blur2d(const float* in, float* out, int h, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x <= 0 || y <= 0 || x >= w - 1 || y >= h - 1) return;
  float s = 0.f;
  for (int dy = -1; dy <= 1; ++dy)
    for (int dx = -1; dx <= 1; ++dx) s += in[(y + dy) * w + (x + dx)];
  out[y * w + x] = s * (1.f / 9.f);
}''', "blur2d")

squared_diff = cp.ElementwiseKernel("float32 x, float32 y", "float32 z",
                                    "z = (x - y) * (x - y)", "squared_diff")


def timed(label, launch):
    launch()  # compile + warm-up
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(LAUNCHES):
        launch()
    end.record()
    end.synchronize()
    print(f"cupy {label}: {1000 * cp.cuda.get_elapsed_time(start, end) / LAUNCHES:.2f} us")


rng = cp.random.default_rng(0)
x = rng.random(N, dtype=cp.float32)
y = cp.random.rand(N, dtype=cp.float32)
for block in (32, 64, 128, 256, 512, 1024):
    grid = ((N + block - 1) // block,)
    timed(f"scale_add block {block}",
          lambda: scale_add(grid, (block,), (x, y, cp.float32(1.5), cp.int32(N))))

img = cp.random.standard_normal((H, W), dtype=cp.float32)
out = cp.zeros_like(img)
for bx, by in ((32, 8), (16, 16), (8, 32), (4, 64), (64, 4), (32, 32)):
    grid = ((W + bx - 1) // bx, (H + by - 1) // by)
    timed(f"blur2d block ({bx}, {by})",
          lambda: blur2d(grid, (bx, by), (img, out, cp.int32(H), cp.int32(W))))

# CuPy's own kernels: elementwise, a user ElementwiseKernel, reductions, random.
for _ in range(LAUNCHES):
    z = cp.sqrt(x * x + y * y) + cp.sin(x)
    d = squared_diff(x, y)
    total, peak, mean = z.sum(), d.max(), img.mean(axis=1)
    x = rng.random(N, dtype=cp.float32)
cp.cuda.Device().synchronize()
print(f"cupy built-ins sum {float(total):.1f} max {float(peak):.4f} mean0 {float(mean[0]):.4f}")
