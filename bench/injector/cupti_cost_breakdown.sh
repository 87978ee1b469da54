#!/usr/bin/env bash
# Where does tracing cost go? One GPU call: per-CPU launch speed (cpu_probe.sh), then launch
# throughput and train_small.py step time for untraced runs, CUPTI attached with nothing enabled,
# bare CUPTI kernel tracing (shared / pinned-host buffers), and libocctrace.so (same settings),
# all interleaved (gpu_bench.py --variant).
#   bench/injector/cupti_cost_breakdown.sh STAGE   (STAGE made by tests/gpu/stage.sh; logs in $OUT)
# Knobs: ROUNDS (10), TRAIN_ROUNDS (5), LAUNCHES (50000), STEPS (300), BENCH_CPU (taskset list).
set -uo pipefail
stage="$(cd "$1" && pwd)"
out="${OUT:-$PWD/breakdown-out}"
mkdir -p "$out"
cupti_dir="$(dirname "$(find /usr/local/cuda*/ -name 'libcupti.so.13' 2>/dev/null | head -1)")"
export LD_LIBRARY_PATH="$cupti_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nproc; } \
  | tee "$out/breakdown-env.txt"
echo "== per-CPU untraced launch speed"
timeout 90 bash "$stage/bench/injector/cpu_probe.sh" "$stage/bin/launch_overhead" 2 20000 | tee "$out/cpu_probe.txt"
echo "== breakdown"
timeout 480 python3 "$stage/bench/injector/gpu_bench.py" --lib "$stage/bin/libocctrace.so" \
  --launch-overhead "$stage/bin/launch_overhead" --train "$stage/tests/gpu/workloads/train_small.py" \
  --bare-cupti "$stage/bin/libbare_cupti_injection.so" --no-torchprof \
  --rounds "${ROUNDS:-10}" --train-rounds "${TRAIN_ROUNDS:-5}" --launches "${LAUNCHES:-50000}" \
  --steps "${STEPS:-300}" \
  --variant attach=bare-cupti:BARE_CUPTI_MODE=attach \
  --variant bare-shared=bare-cupti:BARE_CUPTI_PER_THREAD=0 \
  --variant bare-pinned=bare-cupti:BARE_CUPTI_HOST_PINNED=1 \
  --variant occ-shared=traced:OCCTRACE_CUPTI_PER_THREAD_BUFFERS=0 \
  --variant occ-pinned=traced:OCCTRACE_CUPTI_HOST_PINNED=1 \
  --json "$out/breakdown.json" 2>&1 | tee "$out/breakdown.log"
