#!/usr/bin/env bash
# One run on a GPU machine: environment, features check, accuracy vs ncu, cost on train_small.py.
# Run from the repository root with the built binaries in $CARRY (default .carry-ach).
set -u
CARRY=${CARRY:-.carry-ach}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
# $OUT returns at most 8 files: work in W, copy the few that matter at the end.
W=/tmp/achwork; rm -rf "$W"; mkdir -p "$W"
trap 'cp "$W"/{features.txt,accuracy.txt,acc_occtrace.csv,acc_ncu.csv,acc_ncu_diag.csv,cost_300.txt,cost_2000.txt} "$OUT"/ 2>/dev/null' EXIT
export PYTHONUNBUFFERED=1
cupti_dir=$(dirname "$(find /usr/local/cuda*/ -name 'libcupti.so.13' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=${cupti_dir}:${LD_LIBRARY_PATH:-}
H=$PWD/$CARRY/libocc_achieved_harness.so K=$PWD/$CARRY/occ_kernels L=$PWD/$CARRY/libocctrace.so
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  grep -i profiling /proc/driver/nvidia/params 2>/dev/null; ncu --version | tail -1
  echo "cupti: $cupti_dir"; python3 -c 'import torch; print("torch", torch.__version__)'
} 2>&1 | tee "$W/env.txt"
echo "== features"; timeout 120 bash "$CARRY/run_features.sh" "$K" "$H" "$L" > "$W/features.txt" 2>&1
grep -E "OK|FAIL|rows|values|meta|error|failed" "$W/features.txt"
echo "== accuracy"
for rep in 1 2; do
  CUDA_INJECTION64_PATH=$H OCCTRACE_ACHIEVED=all OCC_HARNESS_CSV=$W/acc_occtrace$rep.csv \
    timeout 120 "$K" accuracy > "$W/acc_launches$rep.txt" 2>&1
  timeout 200 ncu --clock-control none --csv --print-kernel-base mangled \
    --metrics sm__warps_active.avg.pct_of_peak_sustained_active "$K" accuracy > "$W/acc_ncu$rep.csv" 2>&1
  echo "-- run $rep" | tee -a "$W/accuracy.txt"
  python3 "$CARRY/compare_ncu.py" "$W/acc_launches$rep.txt" "$W/acc_occtrace$rep.csv" \
    "$W/acc_ncu$rep.csv" 2>&1 | tee -a "$W/accuracy.txt"
done
cp "$W/acc_occtrace1.csv" "$W/acc_occtrace.csv"; cp "$W/acc_ncu1.csv" "$W/acc_ncu.csv"
# Diagnostic: ncu's own duration and active cycles for the same launches.
timeout 200 ncu --clock-control none --csv --print-kernel-base mangled --metrics \
  sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,gpu__time_duration.sum \
  "$K" accuracy > "$W/acc_ncu_diag.csv" 2>&1
grep -v "^launch " "$W/acc_launches1.txt" | head -20 >> "$W/accuracy.txt"
[ "${SKIP_COST:-0}" = 1 ] && exit 0
echo "== cost"
timeout 250 python3 bench/injector/achieved_cost.py "$H" tests/gpu/workloads/train_small.py \
  --rounds "${ROUNDS:-3}" --variants sample,every,every-deinit --out "$W/cost_300.txt" \
  ${COST_SKIP_ALL:+--skip-all} 2>&1 | tail -20
timeout 150 python3 bench/injector/achieved_cost.py "$H" tests/gpu/workloads/train_small.py \
  --rounds 2 --steps 2000 --variants sample,every,every-deinit --skip-all --out "$W/cost_2000.txt" 2>&1 | tail -20
