#!/usr/bin/env bash
# PM sampling: exit path, alignment and the decode's cost per setting, in one device call (the
# second smoke call of #27). STAGE=gpu-stage-X bash gpu-stage-X/tests/gpu/pm_tune.sh
# Each run is one line of $logs/summary.jsonl (pm_checks.py summary) named by its settings;
# RUNS lists "label|workload|steps|ENV=... ENV=..." entries. Writes $OUT/pm_tune.tgz and
# $OUT/pm_tune_traces.tar.xz (the pm_align traces and TRACES, if they fit 15 MB compressed).
set -uo pipefail
name=pm_tune
source "$(dirname "$0")/stage_env.sh"
mkdir -p "$work/traces"
pack() { tar -C "$work" -czf "$out/pm_tune.tgz" logs; }
trap pack EXIT
checks="$root/tests/gpu/pm_checks.py"

echo "== alignment (pm_align)"
nvcc -O2 -arch=sm_90 -o "$work/pm_align" "$root/tests/gpu/pm_align.cu" >"$logs/nvcc.txt" 2>&1 || cat "$logs/nvcc.txt"
for iv in ${ALIGN_INTERVALS:-20 50}; do
  db="$work/traces/align_${iv}us.db"
  OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=$iv OCCTRACE_OUTPUT="$db" CUDA_INJECTION64_PATH="$lib" \
    timeout -k 5 40 "$work/pm_align" 3000 5 >"$logs/align_${iv}us.out" 2>"$logs/align_${iv}us.err"
  echo "-- ${iv} us: exit $?"; cat "$logs/align_${iv}us.err"
  python3 "$checks" summary "$db" --label "align ${iv}us" | tee -a "$logs/summary.jsonl"
  python3 "$checks" align "$db" --expected "$logs/align_${iv}us.out" --json "$logs/align_${iv}us.json" \
    2>&1 | tee "$logs/align_${iv}us.txt"
done
pack

run() {  # label workload steps "ENV=.. ENV=.."
  local label=$1 script=$2 steps=$3 extra=$4
  local db="$work/traces/${label}.db"
  local t0 t1 rc wall
  t0=$(date +%s.%N)
  env STEPS="$steps" OCCTRACE_OUTPUT="$db" CUDA_INJECTION64_PATH="$lib" $extra \
    timeout -k 5 "${RUN_TIMEOUT:-60}" python3 "$wl/$script" >"$logs/${label}.out" 2>"$logs/${label}.err"
  rc=$?
  t1=$(date +%s.%N)
  wall=$(python3 -c "print($t1 - $t0)")
  echo "-- $label [$extra]: exit $rc wall ${wall}s $(tail -1 "$logs/${label}.out")"
  grep occtrace "$logs/${label}.err" | head -3
  python3 "$checks" summary "$db" --wall-s "$wall" --label "$label $extra" | tee -a "$logs/summary.jsonl"
}

T=train_small.py
R=resnet50_step.py
TS=${TRAIN_STEPS:-1500}
RS=${RESNET_STEPS:-30}
run ts_off $T $TS "OCCTRACE_ACHIEVED=off"
run ts_pm20 $T $TS "OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=20"
run ts_pm20_img200 $T $TS "OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=20 OCCTRACE_PM_IMAGE_SAMPLES=200 OCCTRACE_PM_DECODE_MS=2"
run ts_pm20_nodram $T $TS "OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=20 OCCTRACE_PM_NO_DRAM=1"
run ts_pm20_nodram_img200 $T $TS "OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=20 OCCTRACE_PM_NO_DRAM=1 OCCTRACE_PM_IMAGE_SAMPLES=200 OCCTRACE_PM_DECODE_MS=2"
run ts_pm50 $T $TS "OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=50"
run ts_pm10_nodram_img200 $T $TS "OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=10 OCCTRACE_PM_NO_DRAM=1 OCCTRACE_PM_IMAGE_SAMPLES=200 OCCTRACE_PM_DECODE_MS=2"
pack
run rn_off $R $RS "OCCTRACE_ACHIEVED=off"
run rn_pm20 $R $RS "OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=20"
run rn_pm50 $R $RS "OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=50"
pack

echo "== attribution (pm_checks.py attribute, >= 20 clean samples)"
for db in "$work"/traces/ts_pm*.db "$work"/traces/rn_pm*.db; do
  timeout 60 python3 "$checks" attribute "$db" --json "$logs/attribute_$(basename "$db" .db).json" --top 8 2>&1 | tee -a "$logs/attribute.txt"
done
pack

echo "== traces back (xz)"
keep=("$work"/traces/align_*.db $(for t in ${TRACES:-ts_pm20 rn_pm20 rn_pm50 ts_pm50}; do echo "$work/traces/$t.db"; done))
keep=($(for f in "${keep[@]}"; do [[ -f "$f" ]] && echo "$f"; done))
while (( ${#keep[@]} > 0 )); do
  tar -C "$work/traces" -cf - $(for f in "${keep[@]}"; do basename "$f"; done) | xz -T0 -6 >"$out/pm_tune_traces.tar.xz"
  size=$(stat -c %s "$out/pm_tune_traces.tar.xz")
  echo "traces: ${#keep[@]} files, $size bytes compressed"
  (( size < 15000000 )) && break
  largest=$(ls -S "${keep[@]}" | head -1)
  echo "dropping $largest ($(stat -c %s "$largest") bytes)"
  keep=($(for f in "${keep[@]}"; do [[ "$f" != "$largest" ]] && echo "$f"; done))
done
ls -la "$work/traces" | tee "$logs/traces_ls.txt"
