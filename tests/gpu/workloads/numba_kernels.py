"""numba-cuda workload for the GPU tests: one @cuda.jit kernel, launched LAUNCHES times.

Prints 'numba launches N grid G block B' so the check knows what to look for in the trace.
"""
import os

import numpy as np
from numba import cuda

LAUNCHES = int(os.environ.get("LAUNCHES", "7"))
GRID, BLOCK = 4, 64


@cuda.jit
def occ_numba_axpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


x = cuda.to_device(np.arange(GRID * BLOCK, dtype=np.float32))
y = cuda.to_device(np.zeros(GRID * BLOCK, dtype=np.float32))
for _ in range(LAUNCHES):
    occ_numba_axpy[GRID, BLOCK](np.float32(2.0), x, y)
cuda.synchronize()
print(f"numba launches {LAUNCHES} grid {GRID} block {BLOCK} sum {float(y.copy_to_host().sum()):.1f}")
