"""The block-size experiment a Numba user runs: one @cuda.jit saxpy over 4,194,304 floats
launched at block sizes 64, 128, 256 and 512 (LAUNCHES times each, default 20), for occ-report's
measured-evidence advice (the same function, the same work, different configurations).

Prints 'numba saxpy block B: MEAN us' per block size (CUDA events, after a warm-up launch).
"""
import os

import numpy as np

# numba-cuda registers an overload for np.row_stack, which numpy 2.4+ removed (see
# numba_kernels.py): a test-environment shim.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

N = 4_194_304
LAUNCHES = int(os.environ.get("LAUNCHES", "20"))


@cuda.jit
def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


x = cuda.to_device(np.ones(N, dtype=np.float32))
y = cuda.to_device(np.zeros(N, dtype=np.float32))
for block in (64, 128, 256, 512):
    grid = (N + block - 1) // block
    saxpy[grid, block](np.float32(2.0), x, y)  # compile + warm-up
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(LAUNCHES):
        saxpy[grid, block](np.float32(2.0), x, y)
    end.record()
    end.synchronize()
    print(f"numba saxpy block {block}: {1000 * cuda.event_elapsed_time(start, end) / LAUNCHES:.2f} us")
