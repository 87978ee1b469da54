#!/usr/bin/env bash
# PM sampling (OCCTRACE_ACHIEVED=pm), issue #27's measurements in one device call, most needed
# first (what a time-out cuts is the tail): STAGE=gpu-stage-X bash gpu-stage-X/tests/gpu/pm_measure.sh
#  1. exit and alignment: pm_align at 50 and 20 us (pm_checks.py align)
#  2. pm traces (accuracy's and coverage's PM side): train_small.py, resnet50_step.py (also at
#     20 us: overflow and decode backlog), compiled_model.py (torch.compile), numba_saxpy_sweep.py
#     (block sizes), membound_sweep, launch_matrix
#  3. cost: turns_bench.py, `off` twice (A/A) and `pm`, train_small and ResNet-50, from the first
#     minute (WARM_S, CYCLES)
#  4. Nsight Compute: sm__warps_active.avg.pct_of_peak_sustained_active, caches and clocks left
#     alone, on the same programs (first NCU_COUNT kernels)
#  5. replay (OCCTRACE_ACHIEVED=all) traces of the same programs, short
#  6. kill test in pm mode (kill_test.py --modes pm)
#  7. today's default (`sample`) traces for coverage: the same runs as 2
# SECTIONS (default "1 2 3 4 5 6 7") picks sections.
# Logs: $OUT/pm_measure.tgz (console, pm_checks.py tables, ncu CSVs, turns JSON); traces (xz):
# $OUT/pm_traces_pm.tar.xz, $OUT/pm_traces_other.tar.xz (each kept under 15 MB: the largest are
# dropped first, and said so in the console).
set -uo pipefail
name=pm_measure
source "$(dirname "$0")/stage_env.sh"
traces="$work/traces"
mkdir -p "$traces/pm" "$traces/other"
pack() { tar -C "$work" -czf "$out/pm_measure.tgz" logs; }
trap pack EXIT
checks="$root/tests/gpu/pm_checks.py"
bin="$stage/bin"
ncu --version 2>&1 | tail -1 | tee -a "$logs/env.txt"
started=$(date +%s)
elapsed() { echo $(( $(date +%s) - started )); }

# Programs. launch_matrix and membound_sweep are built here when the stage lacks them.
nvcc -O2 -arch=sm_90 -o "$work/pm_align" "$root/tests/gpu/pm_align.cu" >"$logs/nvcc.txt" 2>&1
lm="$bin/launch_matrix"; [[ -x "$lm" ]] || lm=""
mb="$bin/membound_sweep"
[[ -x "$mb" ]] || { nvcc -O2 -arch=sm_90 -o "$work/membound_sweep" "$root/tests/achieved/gpu/membound_sweep.cu" >>"$logs/nvcc.txt" 2>&1 && mb="$work/membound_sweep"; }

# run DIR LABEL MODE TIMEOUT CMD...: one traced run; MODE off|pm|pm20|sample|all
run() {
  local dir=$1 label=$2 mode=$3 limit=$4; shift 4
  local db="$traces/$dir/${label}_${mode}.db" t0 t1 rc
  local env=(OCCTRACE_OUTPUT="$db" CUDA_INJECTION64_PATH="$lib")
  case "$mode" in
    pm) env+=(OCCTRACE_ACHIEVED=pm) ;;
    pm20) env+=(OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=20) ;;
    *) env+=(OCCTRACE_ACHIEVED="$mode") ;;
  esac
  t0=$(date +%s.%N)
  env "${env[@]}" timeout -k 5 "$limit" "$@" >"$logs/${label}_${mode}.out" 2>"$logs/${label}_${mode}.err"
  rc=$?
  last_rc=$rc
  t1=$(date +%s.%N)
  local wall; wall=$(python3 -c "print(round($t1 - $t0, 2))")
  echo "-- [$(elapsed)s] $label $mode: exit $rc wall ${wall}s $(tail -1 "$logs/${label}_${mode}.out" | cut -c1-80)"
  grep occtrace: "$logs/${label}_${mode}.err" | head -3
  if [[ "$mode" == pm* ]]; then
    timeout 30 python3 "$checks" summary "$db" --wall-s "$wall" --label "$label $mode" >>"$logs/summary.jsonl" 2>&1
    tail -1 "$logs/summary.jsonl" | python3 -c "import json,sys; d=json.loads(sys.stdin.read()); print('   ', {k: d.get(k) for k in ('status','pm_status','pm_rows','pm_samples_idle','pm_overflows','pm_decode_ms','pm_sample_info_ms','pm_writer_ms','pm_samples_lost','bytes_per_s','pm_bytes_per_s')})" 2>/dev/null
  fi
}

T=("python3" "$wl/train_small.py")
R=("python3" "$wl/resnet50_step.py")
C=("python3" "$wl/compiled_model.py")
N=("python3" "$wl/numba_saxpy_sweep.py")
export PYTHONUNBUFFERED=1

sections=" ${SECTIONS:-1 2 3 4 5 6 7} "
want() { [[ "$sections" == *" $1 "* ]]; }

want 1 && {
echo "== 1. exit and alignment"
for iv in 50 20; do
  mode=pm; [[ $iv == 20 ]] && mode=pm20
  run pm align "$mode" 40 "$work/pm_align" 3000 5
  timeout 30 python3 "$checks" align "$traces/pm/align_${mode}.db" --expected "$logs/align_${mode}.out" \
    --json "$logs/align_${mode}.json" 2>&1 | tee "$logs/align_${mode}.txt"
done
pack
}

want 2 && {
echo "== 2. pm traces"
STEPS=${TS_STEPS:-1000} run pm train_small pm 60 "${T[@]}"
STEPS=${RN_STEPS:-20} run pm resnet50 pm 70 "${R[@]}"
STEPS=${RN_STEPS:-20} run pm resnet50 pm20 70 "${R[@]}"
[[ -z "${SKIP_COMPILED:-}" ]] && STEPS=${CM_STEPS:-60} run pm compiled pm 90 "${C[@]}"
LAUNCHES=${NB_LAUNCHES:-1000} run pm numba pm 60 "${N[@]}"
run pm membound pm 30 "$mb"
[[ -n "$lm" ]] && run pm launch_matrix pm 30 "$lm" "$work/lm_expected.json"
pack
}

want 3 && {
echo "== 3. cost in turns [$(elapsed)s]"
# Note: a time-out here once left turns_bench's pm process running, holding the PM hardware for
# every later step (CUPTI_ERROR_HARDWARE_BUSY); keep TURNS_TIMEOUT above the turns' run time.
cp "$root/bench/injector/gpu_bench.py" "$root/bench/injector/turns_bench.py" "$work/" 2>/dev/null
timeout -k 10 "${TURNS_TIMEOUT:-170}" python3 "$root/bench/injector/turns_bench.py" --lib "$lib" \
  --workload "train_small=$wl/train_small.py:100" --workload "resnet50=$wl/resnet50_step.py:8" --no-torchprof \
  --variant "traced-again=traced:TURNS_SAME_AS=traced" --variant "pm=traced:OCCTRACE_ACHIEVED=pm" \
  --only traced,traced-again,pm --pool traced,traced-again \
  --repeats 1 --cycles "${CYCLES:-30}" --warm-s "${WARM_S:-5}" \
  --logs "$logs/turns" --json "$logs/turns.json" 2>&1 | tee "$logs/turns.txt" | tail -40
pack
}

want 4 && {
echo "== 4. Nsight Compute [$(elapsed)s]"
occ=sm__warps_active.avg.pct_of_peak_sustained_active
ncu_run() {  # LABEL LIMIT COUNT CMD...
  local label=$1 limit=$2 count=$3; shift 3
  timeout -k 5 "$limit" ncu --cache-control none --clock-control none --metrics "$occ,gpu__time_duration.sum" \
    --csv --print-units base -c "$count" "$@" >"$logs/ncu_${label}.csv" 2>"$logs/ncu_${label}.err"
  echo "-- [$(elapsed)s] ncu $label: exit $? rows $(grep -c "$occ" "$logs/ncu_${label}.csv")"
}
ncu_run membound 40 60 "$mb"
[[ -n "$lm" ]] && ncu_run launch_matrix 40 200 "$lm" "$work/lm_expected_ncu.json"
STEPS=2 ncu_run train_small 70 "${NCU_COUNT:-200}" "${T[@]}"
STEPS=1 WARMUP=1 ncu_run resnet50 100 "${NCU_RN_COUNT:-400}" "${R[@]}"
LAUNCHES=3 ncu_run numba 40 40 "${N[@]}"
pack
}

want 5 && {
echo "== 5. replay (all) [$(elapsed)s]"
run other membound all 40 "$mb"
[[ -n "$lm" ]] && run other launch_matrix all 40 "$lm" "$work/lm_expected_all.json"
STEPS=20 run other train_small all 60 "${T[@]}"
STEPS=1 WARMUP=1 run other resnet50 all 70 "${R[@]}"
LAUNCHES=3 run other numba all 40 "${N[@]}"
pack
}

want 6 && {
echo "== 6. kill test, pm [$(elapsed)s]"
nvcc -O2 -arch=sm_90 -o "$work/continuous_cuda" "$root/tests/gpu/continuous_cuda.cu" >>"$logs/nvcc.txt" 2>&1
timeout -k 5 "${KILL_TIMEOUT:-70}" python3 "$root/tests/gpu/kill_test.py" --lib "$lib" --cuda-bin "$work/continuous_cuda" \
  --workloads "$wl" --out "$work/kill" --modes pm --kill-after "${KILL_AFTER:-4}" --json "$logs/kill.json" \
  2>&1 | tee "$logs/kill.txt" | grep -E "PASS|FAIL|Traceback|Error|kill_test"
rm -f "$work"/kill/*.db*
pack
}

want 7 && {
echo "== 7. default (sample) traces for coverage [$(elapsed)s]"
STEPS=${TS_STEPS:-1000} run other train_small sample 60 "${T[@]}"
STEPS=${RN_STEPS:-20} run other resnet50 sample 70 "${R[@]}"
STEPS=${CM_STEPS:-60} run other compiled sample 90 "${C[@]}"
LAUNCHES=${NB_LAUNCHES:-1000} run other numba sample 60 "${N[@]}"
pack
}

echo "== tables (pm_checks.py attribute) [$(elapsed)s]"
for db in "$traces"/pm/*.db; do
  timeout 40 python3 "$checks" attribute "$db" --json "$logs/attribute_$(basename "$db" .db).json" --top 10 2>&1 | tee -a "$logs/attribute.txt"
done
pack

echo "== traces back (xz) [$(elapsed)s]"
bring() {  # DIR ARCHIVE
  local dir=$1 archive=$2
  # A trace cut off at exit keeps its last commits in the -wal file: fold it in first.
  for f in "$dir"/*.db; do python3 -c "import sqlite3,sys; sqlite3.connect(sys.argv[1]).execute('PRAGMA wal_checkpoint(TRUNCATE)')" "$f" 2>/dev/null; done
  local keep=("$dir"/*.db)
  while (( ${#keep[@]} > 0 )); do
    tar -C "$dir" -cf - $(for f in "${keep[@]}"; do basename "$f"; done) | xz -T0 -6 >"$archive"
    local size; size=$(stat -c %s "$archive")
    echo "$(basename "$archive"): ${#keep[@]} files, $size bytes"
    (( size < 15500000 )) && break
    local largest; largest=$(ls -S "${keep[@]}" | head -1)
    echo "dropping $(basename "$largest") ($(stat -c %s "$largest") bytes)"
    keep=($(for f in "${keep[@]}"; do [[ "$f" != "$largest" ]] && echo "$f"; done))
  done
}
ls -la "$traces"/pm "$traces"/other >"$logs/traces_ls.txt"
bring "$traces/pm" "$out/pm_traces_pm.tar.xz"
bring "$traces/other" "$out/pm_traces_other.tar.xz"
echo "done [$(elapsed)s]"
