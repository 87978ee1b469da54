"""A Numba user's block-size experiment: a 1-D @cuda.jit saxpy over 16 M floats at block sizes
32..1024 and a 2-D @cuda.jit transpose of a 4096x4096 matrix at block shapes (32, 8), (16, 16),
(8, 32) and (32, 32), LAUNCHES times each (default 20), for #29: measured advice on the user's
own kernels, and names as written in the source (`saxpy(float32, array(float32, 1d, C), ...)`).
Prints 'numba KERNEL block B: MEAN us' (CUDA events, after a warm-up launch).
"""
import os

import numpy as np

# numba-cuda registers an overload for np.row_stack, which numpy 2.4+ removed (see
# numba_kernels.py): a test-environment shim.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

N = 1 << 24
S = 4096
LAUNCHES = int(os.environ.get("LAUNCHES", "20"))


@cuda.jit
def saxpy(a, x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = a * x[i] + y[i]


@cuda.jit
def transpose(src, dst):
    col, row = cuda.grid(2)
    if row < src.shape[0] and col < src.shape[1]:
        dst[col, row] = src[row, col]


def timed(label, launch):
    launch()  # compile + warm-up
    cuda.synchronize()
    start, end = cuda.event(), cuda.event()
    start.record()
    for _ in range(LAUNCHES):
        launch()
    end.record()
    end.synchronize()
    print(f"numba {label}: {1000 * cuda.event_elapsed_time(start, end) / LAUNCHES:.2f} us")


x = cuda.to_device(np.ones(N, dtype=np.float32))
y = cuda.to_device(np.zeros(N, dtype=np.float32))
for block in (32, 64, 128, 256, 512, 1024):
    grid = (N + block - 1) // block
    timed(f"saxpy block {block}", lambda: saxpy[grid, block](np.float32(2.0), x, y))

a = cuda.to_device(np.arange(S * S, dtype=np.float32).reshape(S, S))
b = cuda.device_array((S, S), dtype=np.float32)
for bx, by in ((32, 8), (16, 16), (8, 32), (32, 32)):
    grid = ((S + bx - 1) // bx, (S + by - 1) // by)
    timed(f"transpose block ({bx}, {by})", lambda: transpose[grid, (bx, by)](a, b))
print(f"numba transpose check {float(b.copy_to_host()[1, 0]):.0f}")  # a[0, 1] == 1
