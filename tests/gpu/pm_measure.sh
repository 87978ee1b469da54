#!/usr/bin/env bash
# PM sampling (OCCTRACE_ACHIEVED=pm), issue #27's measurements in one device call, most needed
# first (what a time-out cuts is the tail): STAGE=gpu-stage-X bash gpu-stage-X/tests/gpu/pm_measure.sh
#  0. exit safety: short CUDA C++ programs (with and without cudaDeviceReset), Numba and PyTorch
#     programs, each several times, at 50 us (ResNet-50 also at 20 us): exit status, output as
#     untraced, trace complete, PM rows written (exit_safety.txt)
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
  [[ -n "${PRELOAD:-}" ]] && env+=(LD_PRELOAD="$PRELOAD")
  case "$mode" in
    pm) env+=(OCCTRACE_ACHIEVED=pm) ;;
    pm20) env+=(OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=20) ;;
    pmnd) env+=(OCCTRACE_ACHIEVED=pm OCCTRACE_PM_NO_DRAM=1) ;;
    pm25) env+=(OCCTRACE_ACHIEVED=pm OCCTRACE_PM_INTERVAL_US=25) ;;
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

sections=" ${SECTIONS:-0 1 2 8 3 4 5 6 7} "
want() { [[ "$sections" == *" $1 "* ]]; }

want 0 && {
echo "== 0. exit safety"
# safe LABEL MODE TIMEOUT CMD...: untraced once (its output is the reference), then traced
# SAFE_REPEATS times; one line per traced run in exit_safety.txt.
safe() {
  local label=$1 mode=$2 limit=$3; shift 3
  [[ -f "$logs/${label}_plain.out" ]] || timeout -k 5 "$limit" "$@" >"$logs/${label}_plain.out" 2>/dev/null
  local n
  for n in $(seq 1 "${SAFE_REPEATS:-3}"); do
    run pm "${label}${n}" "$mode" "$limit" "$@"
    local db="$traces/pm/${label}${n}_${mode}.db"
    local same=differs
    # Timings printed by a program differ run to run: compare only lines without digits+"us"/"ms".
    if diff -q <(grep -vE '[0-9.]+ ?(us|ms|s)\b|step|it/s|time' "$logs/${label}_plain.out") \
               <(grep -vE '[0-9.]+ ?(us|ms|s)\b|step|it/s|time' "$logs/${label}${n}_${mode}.out") >/dev/null; then same=same; fi
    local facts
    facts=$(python3 - "$db" <<'PY' 2>&1
import sqlite3, sys
try:
    c = sqlite3.connect(sys.argv[1])
    meta = dict(c.execute("select name, value from OCC_META"))
    rows = c.execute("select count(*) from OCC_PM_SAMPLE").fetchone()[0]
    print(f"status={meta.get('status')} pm_status={meta.get('pm_status')} pm_rows={rows} "
          f"setup_ms={meta.get('pm_setup_ms')} retirements={meta.get('pm_retirements')} overflows={meta.get('pm_overflows')}")
except Exception as e:
    print(f"unreadable: {e}")
PY
)
    echo "$label#$n $mode exit=$last_rc output=$same $facts" | tee -a "$logs/exit_safety.txt"
    [[ $last_rc != 0 ]] && crashed=1
  done
  if [[ -n "${crashed:-}" && -f "$work/segv_bt.so" ]]; then  # once more, for the crash's backtrace
    PRELOAD="$work/segv_bt.so" run pm "${label}_bt" "$mode" "$limit" "$@"
    grep -A40 segv_backtrace "$logs/${label}_bt_${mode}.err" | head -60 | tee -a "$logs/backtraces.txt"
  fi
  crashed=
}
gcc -shared -fPIC -O1 -g -o "$work/segv_bt.so" "$root/tests/gpu/diag/segv_backtrace.c" >>"$logs/nvcc.txt" 2>&1
safe align_short pm 30 "$work/pm_align" 200 2
safe align_reset pm 30 "$work/pm_align" 200 4 reset
safe membound pm 30 "$mb"
[[ -n "$lm" ]] && SAFE_REPEATS=2 safe launch_matrix pm 40 "$lm" "$work/lm_expected_safe.json"
LAUNCHES=200 SAFE_REPEATS=2 safe numba pm 60 "${N[@]}"
STEPS=300 SAFE_REPEATS=2 safe train_small pm 60 "${T[@]}"
STEPS=15 SAFE_REPEATS=2 safe resnet50 pm 70 "${R[@]}"
STEPS=15 SAFE_REPEATS=1 safe resnet50 pm20 70 "${R[@]}"
STEPS=15 SAFE_REPEATS=1 safe resnet50 pmnd 70 "${R[@]}"
echo "exit safety: $(grep -c 'exit=0 output=same status=complete' "$logs/exit_safety.txt") of $(wc -l <"$logs/exit_safety.txt") clean"
pack
}

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

want 8 && {
echo "== 8. the interval: 50, 25 and 20 us [$(elapsed)s]"
STEPS=${RN_STEPS:-20} run pm resnet50 pm 70 "${R[@]}"
STEPS=${RN_STEPS:-20} run pm resnet50 pm25 70 "${R[@]}"
STEPS=${RN_STEPS:-20} run pm resnet50 pm20 70 "${R[@]}"
STEPS=${TS_STEPS:-1000} run pm train_small pm20 60 "${T[@]}"
STEPS=${CM_STEPS:-60} run pm compiled pm20 120 "${C[@]}"
LAUNCHES=${NB_LAUNCHES:-1000} run pm numba pm20 60 "${N[@]}"
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
  --variant "pm20=traced:OCCTRACE_ACHIEVED=pm,OCCTRACE_PM_INTERVAL_US=20" \
  --only traced,traced-again,pm,pm20 --pool traced,traced-again \
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
