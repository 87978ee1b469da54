#!/usr/bin/env bash
# Where does tracing cost go? Launch throughput or train_small.py step time, interleaved
# (gpu_bench.py --variant), for: untraced runs; CUPTI injected, attached with nothing enabled;
# bare CUPTI kernel tracing with and without a subscriber, shared / pinned-host buffers, a fixed
# worker flush period. (libocctrace.so's variants with the same CUPTI settings went with the
# removed OCCTRACE_CUPTI_* switches; their figures are in bench/results.)
#   PART=launch|train bench/injector/cupti_cost_breakdown.sh STAGE   (STAGE made by tests/gpu/stage.sh;
#   logs in $OUT). Each part fits in 10 minutes: launch ~3 min; train ~8 min (a
#   2000-step train_small.py run takes ~17 s, 11 variants x ROUNDS).
# Knobs: CPU_PROBE=1 (first cpu_probe.sh: per-CPU untraced launch speed), ROUNDS (10 launch,
# 2 train), LAUNCHES (50000), STEPS (2000), BENCH_CPU (taskset list).
set -uo pipefail
stage="$(cd "$1" && pwd)"
out="${OUT:-$PWD/breakdown-out}"
mkdir -p "$out"
cupti_dir="$(dirname "$(find /usr/local/cuda*/ -name 'libcupti.so.13' 2>/dev/null | head -1)")"
export LD_LIBRARY_PATH="$cupti_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; nproc; } \
  | tee "$out/breakdown-env.txt"
part="${PART:-launch}"
if [[ "$part" == launch && "${CPU_PROBE:-0}" == 1 ]]; then
  echo "== per-CPU untraced launch speed"
  timeout 90 bash "$stage/bench/injector/cpu_probe.sh" "$stage/bin/launch_overhead" 2 20000 | tee "$out/cpu_probe.txt"
fi
if [[ "$part" == launch ]]; then
  what=(--skip-train --rounds "${ROUNDS:-10}")
else
  what=(--skip-launch --rounds "${ROUNDS:-2}")
fi
echo "== breakdown ($part)"
timeout 480 python3 "$stage/bench/injector/gpu_bench.py" --lib "$stage/bin/libocctrace.so" \
  --launch-overhead "$stage/bin/launch_overhead" --train "$stage/tests/gpu/workloads/train_small.py" \
  --bare-cupti "$stage/bin/libbare_cupti_injection.so" --no-torchprof \
  "${what[@]}" --launches "${LAUNCHES:-50000}" --steps "${STEPS:-2000}" \
  --variant attach=bare-cupti:BARE_CUPTI_MODE=attach \
  --variant bare-sub=bare-cupti:BARE_CUPTI_SUBSCRIBE=1 \
  --variant bare-fp250=bare-cupti:BARE_CUPTI_FLUSH_PERIOD_MS=250 \
  --variant bare-shared=bare-cupti:BARE_CUPTI_PER_THREAD=0 \
  --variant bare-pinned=bare-cupti:BARE_CUPTI_HOST_PINNED=1 \
  --json "$out/breakdown-$part.json" 2>&1 | tee "$out/breakdown-$part.log"
