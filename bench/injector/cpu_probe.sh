#!/usr/bin/env bash
# Which CPUs of the GPU machine launch fast? Runs the untraced empty-kernel launch loop pinned to
# each CPU in turn, PASSES times (interleaved), and prints us/launch per CPU. A VM whose vCPUs
# differ (shared physical cores, interrupt load) shows it here; gpu_bench.py then pins with
# BENCH_CPU to CPUs of one kind, so traced and untraced runs are compared on like CPUs.
#   bench/injector/cpu_probe.sh LAUNCH_OVERHEAD_BIN [PASSES=2] [LAUNCHES=20000]
set -uo pipefail
bin="$1"; passes="${2:-2}"; launches="${3:-20000}"
ncpu="$(nproc --all)"
declare -A results
for ((p = 1; p <= passes; p++)); do
  for ((cpu = 0; cpu < ncpu; cpu++)); do
    v="$(taskset -c "$cpu" "$bin" "$launches" 3 2>&1 | sed -n 's/.*us\/launch \([0-9.]*\).*/\1/p')"
    results[$cpu]+=" ${v:-fail}"
  done
done
echo "cpu  us/launch per pass (untraced, $launches launches x 3 rounds, median round)"
for ((cpu = 0; cpu < ncpu; cpu++)); do echo "$cpu ${results[$cpu]}"; done
