#!/usr/bin/env bash
# GPU benchmarks of libocctrace from a build tree (needs an NVIDIA GPU and PyTorch):
#   bench/injector/run_gpu_bench.sh [BUILD_DIR] [gpu_bench.py options, e.g. --achieved-sample]
# Empty-kernel launch throughput and train_small.py step time, traced vs untraced, interleaved;
# prints medians and ratios (see gpu_bench.py). tests/gpu/run.sh runs the same on a staged tree.
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "${1:-$src/build}" && pwd)"
shift || true
lib="$(find "$build" -name 'libocctrace.so' | head -n1)"
[[ -n "$lib" ]] || { echo "run_gpu_bench: libocctrace.so not found under $build" >&2; exit 1; }
bench="$(find "$build" -name launch_overhead -type f -perm -u+x | head -n1)"
if [[ -z "$bench" ]]; then  # not built by CMake: compile it here
  bench="$build/bench/injector/launch_overhead"
  mkdir -p "$(dirname "$bench")"
  nvcc -O2 -arch=sm_90 -o "$bench" "$src/bench/injector/launch_overhead.cu"
fi
exec python3 "$src/bench/injector/gpu_bench.py" --lib "$lib" --launch-overhead "$bench" \
  --train "$src/tests/gpu/workloads/train_small.py" "$@"
