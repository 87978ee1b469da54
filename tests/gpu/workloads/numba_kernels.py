"""numba-cuda workload for the GPU tests: one @cuda.jit kernel, launched LAUNCHES times.

Prints 'numba launches N grid G block B' so the check knows what to look for in the trace.
"""
import os

import numpy as np

# numba-cuda 0.x registers an overload for np.row_stack, which numpy 2.4+ removed: without this
# alias `import numba.cuda` fails on such an environment before any kernel exists (seen on the
# H100 image: numba-cuda with numpy 2.5). A test-environment shim, not a tracing concern.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

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
