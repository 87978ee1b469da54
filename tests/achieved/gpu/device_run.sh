#!/usr/bin/env bash
# One device call: environment, features check, accuracy vs ncu, cost on train_small.py.
# Run from the repository root with the built binaries in $CARRY (default .carry-ach).
set -u
CARRY=${CARRY:-.carry-ach}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
# $OUT returns at most 8 files: work in W, copy the few that matter at the end.
W=/tmp/achwork; rm -rf "$W"; mkdir -p "$W"
trap 'cp "$W"/{features.txt,accuracy.txt,acc_occtrace.csv,acc_occ_only.csv,acc_ncu.csv,cost.txt,sample_0.csv,cost_runs.log} "$OUT"/ 2>/dev/null' EXIT
export PYTHONUNBUFFERED=1
cupti_dir=$(dirname "$(find /usr/local/cuda*/ -name 'libcupti.so.13' 2>/dev/null | head -1)")
export LD_LIBRARY_PATH=${cupti_dir}:${LD_LIBRARY_PATH:-}
H=$PWD/$CARRY/libocc_achieved_harness.so K=$PWD/$CARRY/occ_kernels
{
  date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
  grep -i profiling /proc/driver/nvidia/params 2>/dev/null; ncu --version | tail -1
  echo "cupti: $cupti_dir"; python3 -c 'import torch; print("torch", torch.__version__)'
} 2>&1 | tee "$W/env.txt"
echo "== features"; timeout 120 bash "$CARRY/run_features.sh" "$K" "$H" > "$W/features.txt" 2>&1
grep -E "OK|FAIL|rows|values|meta|error|failed" "$W/features.txt"
echo "== accuracy"
CUDA_INJECTION64_PATH=$H OCCTRACE_ACHIEVED=all OCC_HARNESS_CSV=$W/acc_occtrace.csv \
  timeout 120 "$K" accuracy > "$W/acc_launches.txt" 2>&1
timeout 300 ncu --clock-control none --csv --print-kernel-base mangled \
  --metrics sm__warps_active.avg.pct_of_peak_sustained_active "$K" accuracy > "$W/acc_ncu.csv" 2>&1
CUDA_INJECTION64_PATH=$H OCCTRACE_ACHIEVED=all OCCTRACE_ACHIEVED_METRICS=occupancy \
  OCC_HARNESS_CSV=$W/acc_occ_only.csv timeout 120 "$K" accuracy > "$W/acc_launches2.txt" 2>&1
python3 "$CARRY/compare_ncu.py" "$W/acc_launches.txt" "$W/acc_occtrace.csv" "$W/acc_ncu.csv" \
  --markdown "$W/accuracy_table.md" 2>&1 | tee "$W/accuracy.txt"
echo "-- occupancy metric only:" | tee -a "$W/accuracy.txt"
python3 "$CARRY/compare_ncu.py" "$W/acc_launches2.txt" "$W/acc_occ_only.csv" "$W/acc_ncu.csv" \
  2>&1 | tee -a "$W/accuracy.txt"
grep -v "^launch " "$W/acc_launches.txt" | head -20 >> "$W/accuracy.txt"
grep "^# " "$W/acc_occtrace.csv" >> "$W/accuracy.txt"
[ "${SKIP_COST:-0}" = 1 ] && exit 0
echo "== cost"
timeout 330 python3 "$CARRY/cost_train_small.py" "$H" tests/gpu/workloads/train_small.py "$W" "${ROUNDS:-3}" 2>&1 | tail -20
