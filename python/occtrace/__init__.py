"""occtrace: record every CUDA kernel launch of a program (`occtrace -- python train.py`) and
turn the trace into an occupancy report (`occ-report trace.db`). The wheel holds the C++ tools
in this package's bin/ and lib/occtrace/ folders; `occtrace` and `occ-report` on PATH exec them.
"""
