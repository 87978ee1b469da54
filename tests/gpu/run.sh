#!/usr/bin/env bash
# Every GPU check and benchmark of occtrace in one command, for one run on a GPU machine.
#
#   tests/gpu/run.sh            (in a tree made by tests/gpu/stage.sh, or set OCC_GPU_BIN)
#
# Expects bin/{libocctrace.so,occtrace,launch_matrix,launch_overhead} next to tests/ (stage.sh
# puts them there) and writes to $OUT (default ./gpu-out): env.txt (GPU, driver, CUDA, torch,
# where libcupti lives), checks.log/.json (PASS/FAIL table), bench.log/.json, the example trace
# train_small_h100.sql and logs.tgz (every run's stdout/stderr). Knobs: GPU_CASES (default all),
# BENCH_ROUNDS (6), BENCH_STEPS (2000), BENCH_LAUNCHES (100000), SKIP_BENCH=1, ACHIEVED_SAMPLE=1,
# BENCH_NO_TORCHPROF=1, BENCH_CPU (CPU list for taskset), SKIP_EXAMPLE=1, SKIP_CHECKS=1.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
bin="${OCC_GPU_BIN:-$root/bin}"
out="${OUT:-$PWD/gpu-out}"
mkdir -p "$out"
work="$(mktemp -d /tmp/occ-gpu.XXXXXX)"
py="${PYTHON:-python3}"
export PYTHONUNBUFFERED=1
if [[ -d "$root/lib" ]]; then
  export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$root/lib"
fi

# libocctrace.so links libcupti.so.13 by SONAME. A PyTorch process already has its wheel's copy
# loaded when the driver injects us; a plain CUDA program needs it on the search path: prefer
# the copy of PyTorch's nvidia wheel (one CUPTI for every test), else the toolkit's.
cuptis="$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13*' -print 2>/dev/null)"
if ldd "$bin/libocctrace.so" | grep -q 'libcupti.so.13 => not found'; then
  pick="$(grep -m1 'site-packages' <<<"$cuptis" || true)"
  [[ -n "$pick" ]] || pick="$(head -n1 <<<"$cuptis")"
  if [[ -n "$pick" ]]; then
    export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$(dirname "$pick")"
  fi
fi

{
  echo "== date"; date -u
  echo "== nvidia-smi"; nvidia-smi
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,persistence_mode --format=csv
  echo "== uname"; uname -a
  echo "== nvcc"; nvcc --version 2>&1 | tail -2
  echo "== libcupti.so.13 copies"; echo "$cuptis"
  echo "== LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
  echo "== ldd libocctrace.so"; ldd "$bin/libocctrace.so"
  echo "== python"; "$py" -c "import sys, torch, triton; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda, 'triton', triton.__version__); print(torch.cuda.get_device_name(0))"
  "$py" -c "import numba, numba.cuda; print('numba', numba.__version__)" 2>&1 | tail -1
  echo "== RmProfilingAdminOnly"; grep -h RmProfilingAdminOnly /proc/driver/nvidia/params 2>/dev/null
} >"$out/env.txt" 2>&1
head -n 30 "$out/env.txt"

checks_rc=0
if [[ "${SKIP_CHECKS:-0}" != 1 ]]; then
echo "== GPU checks"
"$py" "$here/gpu_checks.py" --case "${GPU_CASES:-all}" --lib "$bin/libocctrace.so" \
  --launcher "$bin/occtrace" --matrix "$bin/launch_matrix" --probe "$bin/cupti_client_probe" --work "$work" \
  --workloads "$here/workloads" --json "$out/checks.json" >"$out/checks.log" 2>&1
checks_rc=$?
fi

bench_rc=0
if [[ "${SKIP_BENCH:-0}" != 1 ]]; then
  echo "== benchmarks"
  "$py" "$root/bench/injector/gpu_bench.py" --lib "$bin/libocctrace.so" \
    --launch-overhead "$bin/launch_overhead" --train "$here/workloads/train_small.py" \
    --rounds "${BENCH_ROUNDS:-6}" --steps "${BENCH_STEPS:-2000}" --launches "${BENCH_LAUNCHES:-100000}" \
    ${ACHIEVED_SAMPLE:+--achieved-sample} ${BENCH_NO_TORCHPROF:+--no-torchprof} ${BENCH_SKIP_LAUNCH:+--skip-launch} \
    $([[ -f "$bin/libbare_cupti_injection.so" ]] && echo --bare-cupti "$bin/libbare_cupti_injection.so") \
    --json "$out/bench.json" 2>&1 | tee "$out/bench.log"
  bench_rc=${PIPESTATUS[0]}
fi

if [[ "${SKIP_EXAMPLE:-0}" != 1 ]]; then
echo "== example trace (train_small.py STEPS=10)"
rm -f "$work/example.db"
CUDA_INJECTION64_PATH="$bin/libocctrace.so" OCCTRACE_OUTPUT="$work/example.db" OCCTRACE_ACHIEVED=off \
  STEPS=10 "$py" "$here/workloads/train_small.py" >"$work/example.out" 2>"$work/example.err"
"$py" - "$work/example.db" "$out/train_small_h100.sql" <<'PYEOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
with open(sys.argv[2], "w") as f:
    for line in con.iterdump():
        f.write(line + "\n")
print("example:", con.execute("SELECT COUNT(*) FROM OCC_LAUNCH").fetchone()[0], "launches")
PYEOF
fi

find "$work" -name '*.db' -size +4M -delete  # small traces travel back for inspection
tar -C "$work" -czf "$out/logs.tgz" . 2>/dev/null
echo "== checks (failures and summary; full table in checks.log)"
grep -E '^(FAIL|SKIP)' "$out/checks.log" | head -n 60
grep -E '^(INFO  (torch-count|torchprof|kernels\[inject\]: OCC_META)|[0-9]+ passed)' "$out/checks.log"
echo "checks exit $checks_rc, bench exit $bench_rc"
exit $(( checks_rc != 0 || bench_rc != 0 ))
