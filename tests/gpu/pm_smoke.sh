#!/usr/bin/env bash
# PM sampling (OCCTRACE_ACHIEVED=pm) smoke test on a GPU, in one device call. Run with a staged
# tree (tests/gpu/stage.sh build gpu-stage-X; STAGE=gpu-stage-X bash gpu-stage-X/tests/gpu/pm_smoke.sh).
#  1. permission: the driver's RmProfilingAdminOnly, and pm_status of a first run
#  2. alignment: pm_align (3 ms clock64 spins of known occupancy between 5 ms idle gaps) at
#     INTERVALS: do the active samples line up with each kernel record, and what occupancy do
#     the samples inside each kernel give (pm_checks.py align)?
#  3. overflow and trace size: train_small.py (TRAIN_STEPS) and a ResNet-50 step
#     (RESNET_STEPS) at each of INTERVALS, `off` first: ms/step, pm_* rows, bytes per second
# Writes $OUT/pm_smoke.tgz (logs) and $OUT/pm_smoke_traces.tar.xz (the pm_align traces and the
# TRACE_INTERVAL traces of both workloads, if they fit 15 MB compressed).
set -uo pipefail
name=pm_smoke
source "$(dirname "$0")/stage_env.sh"
mkdir -p "$work/traces"
pack() { tar -C "$work" -czf "$out/pm_smoke.tgz" logs; }
trap pack EXIT
checks="$root/tests/gpu/pm_checks.py"
intervals="${INTERVALS:-10 20 50}"

echo "== permission"
{ id; grep -i RmProfilingAdminOnly /proc/driver/nvidia/params; } 2>&1 | tee "$logs/permission.txt"

echo "== alignment (pm_align)"
nvcc -O2 -arch=sm_90 -o "$work/pm_align" "$root/tests/gpu/pm_align.cu" >"$logs/nvcc.txt" 2>&1 || cat "$logs/nvcc.txt"
for iv in $intervals; do
  db="$work/traces/align_${iv}us.db"
  OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=$iv OCCTRACE_OUTPUT="$db" CUDA_INJECTION64_PATH="$lib" \
    timeout 60 "$work/pm_align" 3000 5 >"$logs/align_${iv}us.out" 2>"$logs/align_${iv}us.err"
  echo "-- ${iv} us: exit $?"; cat "$logs/align_${iv}us.err"
  python3 "$checks" summary "$db" --label "align ${iv}us" | tee -a "$logs/summary.jsonl"
  python3 "$checks" align "$db" --expected "$logs/align_${iv}us.out" --json "$logs/align_${iv}us.json" \
    2>&1 | tee "$logs/align_${iv}us.txt"
done
pack

run_workload() {  # label script steps_var steps interval(off|N)
  local label=$1 script=$2 steps=$4 iv=$5
  local db="$work/traces/${label}_${iv}.db"
  local env=(STEPS="$steps" OCCTRACE_OUTPUT="$db" CUDA_INJECTION64_PATH="$lib")
  if [[ "$iv" == off ]]; then env+=(OCCTRACE_ACHIEVED=off); else env+=(OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US="$iv"); fi
  local t0 t1
  t0=$(date +%s.%N)
  env "${env[@]}" timeout 200 python3 "$wl/$script" >"$logs/${label}_${iv}.out" 2>"$logs/${label}_${iv}.err"
  local rc=$?
  t1=$(date +%s.%N)
  local wall
  wall=$(python3 -c "print($t1 - $t0)")
  echo "-- $label $iv: exit $rc wall ${wall}s $(cat "$logs/${label}_${iv}.out" | tail -1)"
  grep occtrace "$logs/${label}_${iv}.err" | head -5
  python3 "$checks" summary "$db" --wall-s "$wall" --label "$label $iv" | tee -a "$logs/summary.jsonl"
}

echo "== train_small.py"
for iv in off $intervals; do run_workload train_small train_small.py STEPS "${TRAIN_STEPS:-3000}" "$iv"; done
pack
echo "== resnet50_step.py"
for iv in off $intervals; do run_workload resnet50 resnet50_step.py STEPS "${RESNET_STEPS:-60}" "$iv"; done
pack

echo "== attribution (pm_checks.py attribute, >= 20 clean samples)"
for db in "$work"/traces/*_"${TRACE_INTERVAL:-20}".db; do
  python3 "$checks" attribute "$db" --json "$logs/attribute_$(basename "$db" .db).json" --top 12 2>&1 | tee -a "$logs/attribute.txt"
done
pack

echo "== traces back (xz)"
keep=("$work"/traces/align_*.db "$work"/traces/*_"${TRACE_INTERVAL:-20}".db)
while true; do
  tar -C "$work/traces" -cf - $(for f in "${keep[@]}"; do basename "$f"; done) | xz -T0 -6 >"$out/pm_smoke_traces.tar.xz"
  size=$(stat -c %s "$out/pm_smoke_traces.tar.xz")
  echo "traces: ${#keep[@]} files, $size bytes compressed"
  (( size < 15000000 || ${#keep[@]} <= 1 )) && break
  # Drop the largest and try again.
  largest=$(ls -S "${keep[@]}" | head -1)
  echo "dropping $largest ($(stat -c %s "$largest") bytes)"
  keep=($(for f in "${keep[@]}"; do [[ "$f" != "$largest" ]] && echo "$f"; done))
done
ls -la "$work/traces" | tee "$logs/traces_ls.txt"
