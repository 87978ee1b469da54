#!/usr/bin/env bash
# GPU validation of the cubin facts (OCC_FUNCTION), CUPTI STATE notifications and the
# torch.profiler conflict message. Usage: tests/injector/gpu_check/check.sh [BUILD_DIR]
# Prints every figure it compares and "RESULT: PASS" / "RESULT: FAIL"; exit status 0 / 1.
set -u
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:-build}" && pwd)
launcher="$build/injector/occtrace"
nvcc=${NVCC:-/usr/local/cuda/bin/nvcc}
work=$(mktemp -d)
fail=0
check() {  # name expected actual; an empty expected value means the reference was not found
  if [ -n "$2" ] && [ "$2" = "$3" ]; then echo "ok   $1: $3"; else echo "FAIL $1: expected $2, got $3"; fail=1; fi
}
q() {  # DB SQL: rows as "a|b" lines (Python's sqlite3: no sqlite3 CLI needed)
  python3 -c 'import sqlite3,sys
for r in sqlite3.connect(sys.argv[1]).execute(sys.argv[2]): print("|".join(str(v) for v in r))' "$1" "$2"
}

echo "== A: per-function facts from the cubin vs cudaFuncGetAttributes and ptxas -v"
"$nvcc" -arch=sm_90 -Xptxas -v -o "$work/app" "$here/cubin_facts_app.cu" 2> "$work/ptxas.txt" || { echo "nvcc failed"; exit 1; }
grep -E "Function properties|stack frame|barriers" "$work/ptxas.txt"
"$launcher" -o "$work/a.db" -- "$work/app" > "$work/app.txt" 2> "$work/a.err"; echo "app exit: $?"
cat "$work/app.txt" "$work/a.err"
fn="FROM OCC_FUNCTION f JOIN StringIds s ON s.id=f.mangledName WHERE s.value"
runtime_local=$(sed -n 's/^local_array localSizeBytes=\([0-9]*\).*/\1/p' "$work/app.txt")
check "OCC_FUNCTION.localMemoryPerThread(local_array) = cudaFuncGetAttributes.localSizeBytes" \
  "$runtime_local" "$(q "$work/a.db" "SELECT localMemoryPerThread $fn='_Z11local_arrayPfi'")"
check "OCC_KERNEL_CONFIG.localMemoryPerThread(local_array) = localSizeBytes" "$runtime_local" \
  "$(q "$work/a.db" "SELECT DISTINCT c.localMemoryPerThread FROM OCC_KERNEL_CONFIG c JOIN StringIds s ON s.id=c.mangledName WHERE s.value='_Z11local_arrayPfi'")"
ptxas_barriers=$(grep -A2 "_Z14named_barriersPf" "$work/ptxas.txt" | sed -n 's/.*used \([0-9]*\) barriers.*/\1/p' | head -1)
check "OCC_FUNCTION.barrierCount(named_barriers) = ptxas" "$ptxas_barriers" \
  "$(q "$work/a.db" "SELECT barrierCount $fn='_Z14named_barriersPf'")"
runtime_regs=$(sed -n 's/^named_barriers .*numRegs=\([0-9]*\).*/\1/p' "$work/app.txt")
check "OCC_FUNCTION.registersPerThread(named_barriers) = numRegs" "$runtime_regs" \
  "$(q "$work/a.db" "SELECT registersPerThread $fn='_Z14named_barriersPf'")"
check "cubin_modules_skipped" "0" "$(q "$work/a.db" "SELECT value FROM OCC_META WHERE name='cubin_modules_skipped'")"
echo "OCC_META cubin/cupti rows:"; q "$work/a.db" "SELECT name, value FROM OCC_META WHERE name LIKE 'cubin%' OR name LIKE 'cupti_%' OR name IN ('function_count','foreign_activity_records')"

echo "== A on PyTorch (lazy loading, large modules) + C: torch.profiler in the traced process"
"$launcher" -o "$work/c.db" -- python3 "$here/torch_profiler_conflict.py" > "$work/c.txt" 2> "$work/c.err"; status=$?
cat "$work/c.txt"; grep -E "occtrace|CUPTI" "$work/c.err"
check "program exit status" "0" "$status"
grep -q "program completed" "$work/c.txt" && echo "ok   program completed" || { echo "FAIL program did not complete"; fail=1; }
if grep -qE "occtrace: .*(was refused: CUPTI 13.0 allows one subscriber and occtrace holds it|kinds occtrace does not enable|CUPTI warning|CUPTI error)" "$work/c.err"; then
  echo "ok   occtrace named the conflict"
else
  echo "FAIL occtrace printed nothing about the conflict (see docs/tracing.md 'Another profiler in the way')"; fail=1
fi
q "$work/c.db" "SELECT name, value FROM OCC_META WHERE name LIKE 'cubin%' OR name LIKE 'cupti_%' OR name IN ('function_count','foreign_activity_records','launch_count','status')"
echo "configs with cubin local memory > 0: $(q "$work/c.db" "SELECT COUNT(*) FROM OCC_KERNEL_CONFIG WHERE localMemoryPerThread > 0")"
echo "kernels launched without an OCC_FUNCTION row: $(q "$work/c.db" "SELECT COUNT(DISTINCT mangledName) FROM OCC_KERNEL_CONFIG WHERE mangledName NOT IN (SELECT mangledName FROM OCC_FUNCTION)")"
rm -rf "$work"
[ $fail = 0 ] && echo "RESULT: PASS" || echo "RESULT: FAIL"
exit $fail
