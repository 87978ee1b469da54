#!/usr/bin/env bash
# One GPU machine's checks of achieved occupancy on memory-bound kernels, the one-pass
# throughput metrics, lossless kills with the profiler active, and the default mode's per-launch
# cost. Each part has its own time limit so the whole fits in ten minutes.
# Run from a staged tree (tests/gpu/stage.sh build gpu-stage) on a GPU machine:
#   STAGE=gpu-stage tests/gpu/membound_throughput_cost.sh
# Writes $OUT/membound_cost.tgz (every log, the traces as SQLite files) and prints the summaries.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
stage="${STAGE:-$root/gpu-stage}"
out="${OUT:-$PWD/gpu-out}"
work="$(mktemp -d /tmp/occ-membound.XXXXXX)"
logs="$work/logs"
mkdir -p "$logs" "$out"
trap 'tar -C "$work" -czf "$out/membound_cost.tgz" logs' EXIT
export PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$stage/lib"
cupti="$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13*' -print 2>/dev/null | grep -m1 site-packages)"
[[ -n "$cupti" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cupti")"
bin="$stage/bin" lib="$stage/bin/libocctrace.so" wl="$stage/tests/gpu/workloads"
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  ncu --version | tail -1
  python3 -c "import torch; print('torch', torch.__version__)"
} >"$logs/env.txt" 2>&1
cat "$logs/env.txt"
section() { echo "== $1 ($(date -u +%T))"; }

section "memory-bound sweep: occtrace vs ncu"
timeout 260 bash "$stage/tests/achieved/gpu/run_membound.sh" "$bin/membound_sweep" "$lib" \
  "$work/logs/membound" 2>&1 | tee "$logs/membound.txt"
python3 - "$work"/logs/membound/*.db <<'PY' >"$logs/membound_meta.txt" 2>&1
import sqlite3, sys
for path in sys.argv[1:]:
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    print(path, dict(con.execute("SELECT name, value FROM OCC_META WHERE name IN "
                                 "('achieved_metrics','achieved_status','achieved_launches_measured')")))
PY
cat "$logs/membound_meta.txt"
"$bin/occ-report" "$work/logs/membound/occtrace1.db" >"$logs/membound_report.txt" 2>&1
"$bin/occ-report" "$work/logs/membound/occtrace1.db" -o "$logs/membound_report.json" >/dev/null 2>&1

section "features: edge cases under the harness and libocctrace.so"
timeout 80 bash "$stage/tests/achieved/gpu/run_features.sh" "$bin/occ_kernels" \
  "$bin/libocc_achieved_harness.so" "$lib" >"$logs/features.txt" 2>&1
echo "features exit $?"; grep -E "FAIL|passed|failed" "$logs/features.txt" | tail -n 5

section "kill tests with the profiler active (sample, all)"
nvcc -O2 -arch=sm_90 -o "$work/continuous_cuda" "$stage/tests/gpu/continuous_cuda.cu" >"$logs/nvcc.txt" 2>&1
timeout 110 python3 "$stage/tests/gpu/kill_test.py" --lib "$lib" --cuda-bin "$work/continuous_cuda" \
  --workloads "$wl" --out "$work/kill" --modes sample,all --kill-after 3,7 \
  --json "$logs/kill.json" 2>&1 | tee "$logs/kill.txt"
rm -f "$work"/kill/*.db*

section "cost: launch throughput, untraced / off / sample (profiler parked after its warm-up)"
timeout 120 python3 "$stage/bench/injector/gpu_bench.py" --lib "$lib" \
  --launch-overhead "$bin/launch_overhead" --train "$wl/train_small.py" --achieved-sample \
  --no-torchprof --rounds 10 --launches 50000 --skip-train --json "$logs/cost.json" 2>&1 | tee "$logs/cost.txt"
section done
