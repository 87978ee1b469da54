#!/usr/bin/env bash
# One GPU machine's checks of quiet parking (sample mode switches its launch callbacks off once
# every signature is measured): the edge cases and the quiet sequence under libocctrace.so, kills
# in sample mode, and the default mode's cost against off, with and without quiet parking.
# Run from a staged tree (tests/gpu/stage.sh build gpu-stage) on a GPU machine:
#   STAGE=gpu-stage tests/gpu/quiet_park_cost.sh
# Writes $OUT/quiet_park_cost.tgz (every log) and prints the summaries; each part has its own
# time limit so the whole fits in ten minutes.
set -uo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
stage="${STAGE:-$root/gpu-stage}"
out="${OUT:-$PWD/gpu-out}"
work="$(mktemp -d /tmp/occ-quiet.XXXXXX)"
logs="$work/logs"
mkdir -p "$logs" "$out"
trap 'tar -C "$work" -czf "$out/quiet_park_cost.tgz" logs' EXIT
export PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$stage/lib"
cupti="$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13*' -print 2>/dev/null | grep -m1 site-packages)"
[[ -n "$cupti" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cupti")"
bin="$stage/bin" lib="$stage/bin/libocctrace.so" wl="$stage/tests/gpu/workloads"
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  python3 -c "import torch; print('torch', torch.__version__)"
} >"$logs/env.txt" 2>&1
cat "$logs/env.txt"
section() { echo "== $1 ($(date -u +%T))"; }

section "features: edge cases, parking, quiet parking (harness and libocctrace.so)"
timeout 90 bash "$stage/tests/achieved/gpu/run_features.sh" "$bin/occ_kernels" \
  "$bin/libocc_achieved_harness.so" "$lib" >"$logs/features.txt" 2>&1
echo "features exit $?"; grep -E "OK|FAIL|quiet|error" "$logs/features.txt" | tail -n 12

section "quiet parking on a launch loop: when the callbacks go off"
CUDA_INJECTION64_PATH=$lib OCCTRACE_ACHIEVED=sample OCCTRACE_QUIET=1 OCCTRACE_OUTPUT=$work/lo.db \
  timeout 60 "$bin/launch_overhead" 200000 5 2>&1 | tail -n 2 | tee "$logs/launch_quiet.txt"
python3 - "$work/lo.db" <<'PY' 2>&1 | tee -a "$logs/launch_quiet.txt"
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
print(dict(con.execute("SELECT name, value FROM OCC_META WHERE name IN ('achieved_parks', "
      "'achieved_quiet_parks', 'achieved_listens', 'achieved_launches_measured', 'launch_count')")))
PY

section "kill tests in sample mode (quiet parking on)"
nvcc -O2 -arch=sm_90 -o "$work/continuous_cuda" "$stage/tests/gpu/continuous_cuda.cu" >"$logs/nvcc.txt" 2>&1
timeout 90 python3 "$stage/tests/gpu/kill_test.py" --lib "$lib" --cuda-bin "$work/continuous_cuda" \
  --workloads "$wl" --out "$work/kill" --modes sample --kill-after 3,6 \
  --json "$logs/kill.json" 2>&1 | tee "$logs/kill.txt"
rm -f "$work"/kill/*.db*

section "cost: launch throughput, untraced / off / sample / sample without quiet parking"
timeout 200 python3 "$stage/bench/injector/gpu_bench.py" --lib "$lib" \
  --launch-overhead "$bin/launch_overhead" --train "$wl/train_small.py" --achieved-sample \
  --variant "sample-noquiet=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_ACHIEVED_QUIET_PARK=0" \
  --no-torchprof --rounds 5 --launches 200000 --skip-train --json "$logs/cost_launch.json" 2>&1 \
  | tee "$logs/cost_launch.txt"

section "cost: ResNet-50 training steady state, untraced / off / sample"
timeout 200 python3 "$stage/bench/injector/gpu_bench.py" --lib "$lib" \
  --launch-overhead "$bin/launch_overhead" --train "$wl/train_small.py" --achieved-sample \
  --no-torchprof --skip-launch --skip-train-small --resnet "$wl/resnet50_step.py" \
  --resnet-rounds 2 --resnet-steps 150 --warmup-s 15 --json "$logs/cost_resnet.json" 2>&1 \
  | tee "$logs/cost_resnet.txt"
section done
