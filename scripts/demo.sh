#!/usr/bin/env bash
# The main job on the bundled example: builds occtrace (installing missing Debian packages),
# then reports on a real trace recorded on an H200 running tests/gpu/workloads/demo_train_sweep.py:
# a small PyTorch training loop (cuDNN, cuBLASLt and ATen kernels: not yours to tune) beside the
# user's own CuPy RawKernels swept over block sizes and 2-D block shapes on the same work, which
# get the measured best configuration. Extra arguments go to occ-report (e.g. --format markdown,
# -o report.html, --top 5).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >&2
exec ./build/analyzer/occ-report examples/demo_h200.sql --top 10 "$@"
