"""One memory-bound saxpy (CuPy RawKernel) launched back to back and launched alone, at block 128
and 256, so that PM sampling and Nsight Compute can be compared on each (docs/accuracy.md: PM
reads block-128 elementwise kernels 6-9 points above ncu; is it how the launches ran?).

Four configurations over the same 16.8 M floats; the isolated ones get one extra block (the
kernel guards its index), so each pattern is a configuration of its own in both tools:
  back to back  grid 131072 x 128 and 65536 x 256: LAUNCHES launches, no gap
  alone         grid 131073 x 128 and 65537 x 256: LAUNCHES launches, each followed by a
                synchronize and GAP_MS of idle GPU
Prints the configurations and a checksum (the same in every run)."""
import os
import time

import cupy as cp

N = 131072 * 128
LAUNCHES = int(os.environ.get("LAUNCHES", "100"))
GAP_MS = float(os.environ.get("GAP_MS", "1"))

saxpy = cp.RawKernel(r"""
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}""", "saxpy")

x = cp.ones(N, dtype=cp.float32)
y = cp.zeros(N, dtype=cp.float32)
stream = cp.cuda.Stream(non_blocking=True)
with stream:
    for block in (128, 256):
        grid = (N + block - 1) // block
        for _ in range(LAUNCHES):
            saxpy((grid,), (block,), (cp.int32(N), cp.float32(1.0), x, y))
        stream.synchronize()
        for _ in range(LAUNCHES):
            saxpy((grid + 1,), (block,), (cp.int32(N), cp.float32(1.0), x, y))
            stream.synchronize()
            time.sleep(GAP_MS / 1000)
        print(f"block {block}: back to back grid {grid}, alone grid {grid + 1}, {LAUNCHES} launches each")
    stream.synchronize()
print("checksum", float(y[:1024].sum()), float(y[-1024:].sum()))
