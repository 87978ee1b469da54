#!/usr/bin/env bash
# The release validation on a GPU machine, in one run: every GPU check of the injector
# (tests/gpu/run.sh), achieved occupancy of the real libocctrace.so against Nsight Compute,
# its cost on train_small.py, the injector benchmarks, and the bundled example trace.
#
#   PART=checks|bench|all tests/gpu/validate_all.sh STAGE   (STAGE made by tests/gpu/stage_all.sh)
#
# PART=checks (every correctness check, ~6 min): env.txt checks.log cubin.txt accuracy.txt
#   tailwave.txt tailwave_200us.txt features.txt train_small_h100.sql logs.tgz in $OUT. PART=bench (~6 min): bench.log cost.txt
#   logs.tgz. PART=all does both (over 10 minutes).
set -uo pipefail
stage="$(cd "$1" && pwd)"
out="${OUT:-$PWD/validate-out}"
mkdir -p "$out"
work="$(mktemp -d /tmp/occ-validate.XXXXXX)"
export PYTHONUNBUFFERED=1
lib="$stage/bin/libocctrace.so"
ach="$stage/ach"
section() { echo; echo "== $* ($(date -u +%T))"; }

part="${PART:-checks}"
want() { [[ "$part" == all || "$part" == "$1" ]]; }

if want checks; then
section "GPU checks (tests/gpu/run.sh)"
OUT="$work/gpu" SKIP_EXAMPLE=1 SKIP_BENCH=1 timeout 300 bash "$stage/tests/gpu/run.sh"
cp "$work/gpu/env.txt" "$work/gpu/checks.log" "$out/" 2>/dev/null
fi
if want bench; then
section "benchmarks (tests/gpu/run.sh: launch throughput, train_small step time)"
# 300-step runs keep this part short; the step-time figures of record use gpu_bench.py's
# 2000-step runs, run on their own (docs/performance.md).
OUT="$work/gpub" SKIP_EXAMPLE=1 SKIP_CHECKS=1 ACHIEVED_SAMPLE=1 BENCH_ROUNDS="${BENCH_ROUNDS:-5}" BENCH_STEPS="${BENCH_STEPS:-300}" \
  timeout 400 bash "$stage/tests/gpu/run.sh"
cp "$work/gpub/bench.log" "$out/" 2>/dev/null
fi

# run.sh put libcupti on the library path when needed; do the same for the plain programs below.
cupti_dir="$(dirname "$(find /usr/local/cuda*/ -name 'libcupti.so.13' 2>/dev/null | head -1)")"
export LD_LIBRARY_PATH="$cupti_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"

if want checks; then
section "cubin facts (OCC_FUNCTION), CUPTI notifications, torch.profiler conflict"
mkdir -p "$work/b/injector"
cp "$stage/bin/occtrace" "$stage/bin/libocctrace.so" "$work/b/injector/"
timeout 150 bash "$stage/tests/injector/gpu_check/check.sh" "$work/b" >"$out/cubin.txt" 2>&1
grep -E "^(ok|FAIL|RESULT)" "$out/cubin.txt"

section "achieved occupancy of libocctrace.so vs ncu (OCCTRACE_ACHIEVED=all)"
rm -f "$work/acc.db"
CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$work/acc.db" OCCTRACE_ACHIEVED=all \
  timeout 120 "$ach/occ_kernels" accuracy >"$work/acc_launches.txt" 2>"$work/acc_err.txt"
python3 "$ach/occtrace_csv.py" "$work/acc.db" "$work/acc_occtrace.csv"
timeout 200 ncu --clock-control none --csv --print-kernel-base mangled \
  --metrics sm__warps_active.avg.pct_of_peak_sustained_active "$ach/occ_kernels" accuracy \
  >"$work/acc_ncu.csv" 2>&1
python3 "$ach/compare_ncu.py" "$work/acc_launches.txt" "$work/acc_occtrace.csv" "$work/acc_ncu.csv" \
  2>&1 | tee "$out/accuracy.txt"

section "all mode on PyTorch: every kernel record kept while every launch is profiled"
rm -f "$work/allmode.db"
CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$work/allmode.db" OCCTRACE_ACHIEVED=all STEPS=20 \
  timeout 200 python3 "$stage/tests/gpu/workloads/train_small.py" >"$work/allmode.out" 2>&1
tail -1 "$work/allmode.out"
python3 - "$work/allmode.db" <<'PYEOF' | tee "$out/allmode.txt"
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
meta = dict(con.execute("SELECT name, value FROM OCC_META").fetchall())
launches = con.execute("SELECT COUNT(*) FROM OCC_LAUNCH").fetchone()[0]
measured = con.execute("SELECT COUNT(*) FROM OCC_ACHIEVED WHERE status = 'measured'").fetchone()[0]
ok = launches == measured and meta.get("dropped_records") == "0"
print(f"{'PASS' if ok else 'FAIL'} all mode: {launches} kernel rows, {measured} measured, "
      f"dropped_records {meta.get('dropped_records')}, phases {meta.get('achieved_phase_ms')}")
PYEOF

section "tail-wave grid: occtrace and ncu against each launch's own block timeline"
timeout 240 python3 "$ach/tailwave.py" "$ach/occ_kernels" "$lib" "$work/tailwave" --launches 20 --rounds 2 \
  2>&1 | cut -c1-400 | tee "$out/tailwave.txt"
timeout 120 python3 "$ach/tailwave.py" "$ach/occ_kernels" "$lib" "$work/tailwave200" --launches 8 --rounds 1 \
  --factor 10 2>&1 | cut -c1-400 | tee "$out/tailwave_200us.txt"

section "achieved-occupancy edge cases (cooperative, cluster, capture, graph, threads)"
timeout 120 bash "$ach/run_features.sh" "$ach/occ_kernels" "$ach/libocc_achieved_harness.so" "$lib" \
  >"$out/features.txt" 2>&1
grep -E "OK|FAIL" "$out/features.txt" | tail -15

fi
if want bench; then
section "cost of achieved occupancy on train_small.py (libocctrace.so, sample mode)"
timeout 170 python3 "$stage/bench/injector/achieved_cost.py" "$lib" "$stage/tests/gpu/workloads/train_small.py" \
  --rounds "${COST_ROUNDS:-3}" --variants off,sample,every --out "$out/cost.txt" 2>&1 | tail -25
fi
if want checks; then
section "bundled example trace (train_small.py STEPS=10, every signature sampled once)"
rm -f "$work/example.db"
CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$work/example.db" OCCTRACE_ACHIEVED=sample \
  OCCTRACE_SAMPLE_BUDGET=100% STEPS=10 timeout 120 python3 "$stage/tests/gpu/workloads/train_small.py" \
  >"$work/example.out" 2>"$work/example.err"
cat "$work/example.out" "$work/example.err"
python3 - "$work/example.db" "$out/train_small_h100.sql" <<'PYEOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
print("integrity:", con.execute("PRAGMA integrity_check").fetchone()[0])
with open(sys.argv[2], "w") as f:
    for line in con.iterdump():
        f.write(line + "\n")
print("example:", con.execute("SELECT COUNT(*) FROM OCC_LAUNCH").fetchone()[0], "launches,",
      con.execute("SELECT COUNT(*) FROM OCC_ACHIEVED WHERE status='measured'").fetchone()[0], "measured")
PYEOF
fi

find "$work" -name '*.db' -size +4M -delete
tar -C "$work" -czf "$out/logs.tgz" . 2>/dev/null
echo "validate_all done $(date -u +%T)"
