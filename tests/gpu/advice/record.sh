#!/usr/bin/env bash
# Real traces of the advice test programs, in one device call, from a staged tree
# (tests/gpu/stage.sh build gpu-stage-X) whose bin/ also holds the CUDA C++ programs, built on
# the CPU machine (nvcc -arch=sm_90; header_libs.cu needs CUTLASS's headers:
# `pip download nvidia-cutlass`, its cutlass_library/source/include):
#   STAGE=gpu-stage-X bash gpu-stage-X/tests/gpu/advice/record.sh
# Each program runs untraced once (its output is the reference) and traced once in the default
# mode, from a cold process:
#   concurrent_0   concurrent_sweep 0 1500: four block sizes on four streams at once
#   concurrent_100 concurrent_sweep 100 1500: each block size alone first, then at once
#   header_libs    Thrust, CUB and CUTLASS in a user binary, __launch_bounds__(1024)
#   compile_red    compile_reductions.py, torch.compile with a cold Inductor cache
# $OUT: advice.tar (NAME.db.xz, NAME.out, NAME.err, NAME.report.txt), progress.log.
set -uo pipefail
name=advice
source "$(dirname "$0")/../stage_env.sh"
bin="$stage/bin"
report="$bin/occ-report"
progress="$out/progress.log"
cp "$logs/env.txt" "$progress"
mkdir -p "$work/traces"
# record LABEL LIMIT CMD...: untraced, then traced; outputs compared without timings.
record() {
  local label=$1 limit=$2; shift 2
  timeout -k 5 "$limit" "$@" >"$work/traces/$label.plain.out" 2>&1
  local plain_rc=$?
  local t0=$SECONDS
  OCCTRACE_OUTPUT="$work/traces/$label.db" CUDA_INJECTION64_PATH="$bin/libocctrace.so" \
    timeout -k 5 "$limit" "$@" >"$work/traces/$label.out" 2>"$work/traces/$label.err"
  local rc=$?
  local same=differs
  diff -q <(grep -vE "[0-9.]+ us per launch" "$work/traces/$label.plain.out" | sort) \
          <(grep -vE "[0-9.]+ us per launch" "$work/traces/$label.out" | sort) >/dev/null && same=same
  timeout 120 "$report" "$work/traces/$label.db" --top 12 >"$work/traces/$label.report.txt" 2>&1
  echo "$label: untraced exit $plain_rc, traced exit $rc in $((SECONDS - t0)) s, output $same, report exit $?" | tee -a "$progress"
}
record concurrent_0 90 "$bin/concurrent_sweep" 0 1500
record concurrent_100 90 "$bin/concurrent_sweep" 100 1500
record header_libs 120 "$bin/header_libs" 30
# Fresh Inductor and Triton caches for each run, so the traced one compiles cold too.
record compile_red 240 bash -c 'TORCHINDUCTOR_CACHE_DIR=$(mktemp -d) TRITON_CACHE_DIR=$(mktemp -d) exec python3 "$0"' \
  "$root/tests/gpu/workloads/compile_reductions.py"
for f in "$work"/traces/*.db; do xz -T8 -6 "$f"; done
tar -C "$work/traces" -cf "$out/advice.tar" .
ls -la "$out" | tee -a "$progress"
