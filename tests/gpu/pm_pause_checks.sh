#!/usr/bin/env bash
# How PM sampling pauses (pm_collector.h's CPU bound), on a real GPU, in one device call, from a
# staged tree:   STAGE=gpu-stage-NAME bash gpu-stage-NAME/tests/gpu/pm_pause_checks.sh
#
#  1. Per-launch cost by phase: launch_overhead (empty launches, LAUNCH_OVERHEAD_VERBOSE=1) for
#     ROUNDS rounds of 20,000 (~15 s) per process, PROCS interleaved sets of `off`, the default
#     mode (`stop`) and, when the stage has variant/libocctrace-disable.so, the default mode of
#     that build (`disable`); launch_phases.py compares the rounds while sampling (the first 5 s)
#     and while paused. Each trace's OCC_META facts of the bound are printed.
#  2. Kill tests in the default mode (kill_test.py --modes pm): SIGKILL while sampling (2 s) and
#     while paused (9 s), for each build.
#  3. gpu_checks.py in the default mode: the launch zoo's counts through the three entry points,
#     PyTorch counts, Numba, output unchanged.
# $OUT: pm_pause.log (everything), pm_pause.tgz (the logs and JSON).
set -uo pipefail
name=pm_pause
source "$(dirname "$0")/stage_env.sh"
exec > >(tee "$out/pm_pause.log") 2>&1
pack() { tar -C "$work" -czf "$out/pm_pause.tgz" logs 2>/dev/null; }
declare -A libs=([stop]="$lib")
variants="off stop"
if [[ -f "$stage/variant/libocctrace-disable.so" ]]; then
  libs[disable]="$stage/variant/libocctrace-disable.so"; variants="$variants disable"
fi
libs[off]="$lib"
meta() {  # the bound's facts from a trace
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
m = dict(db.execute("SELECT name, value FROM OCC_META"))
keys = ["launch_count", "achieved_mode", "pm_status", "pm_sampling_ms", "pm_run_ms", "pm_pauses",
        "pm_reopens", "pm_overflows", "pm_decode_errors", "pm_decode_ms", "pm_samples", "pm_wakeups"]
print("   meta: " + " ".join(f"{k}={m.get(k, '-')}" for k in keys))
PY
}
if [[ ${SKIP_PHASES:-0} != 1 ]]; then
  say "1. launch_overhead by phase: $variants, ${PROCS:-3} sets, ${ROUNDS:-150} rounds of 20000"
  for ((p = 1; p <= ${PROCS:-3}; p++)); do
    for v in $variants; do
      db="$work/launch-$v-$p.db"
      achieved=; [[ $v == off ]] && achieved=off
      echo "== $v process $p $(date -u +%T)"
      env LAUNCH_OVERHEAD_VERBOSE=1 CUDA_INJECTION64_PATH="${libs[$v]}" OCCTRACE_OUTPUT="$db" OCCTRACE_FORCE=1 \
        OCCTRACE_QUIET=1 ${achieved:+OCCTRACE_ACHIEVED=$achieved} \
        timeout 120 "$stage/bin/launch_overhead" 20000 "${ROUNDS:-150}" 2>&1
      meta "$db"
      rm -f "$db" "$db"-*
    done
  done > "$logs/launch_phases.log"
  grep -E "^== |launch_overhead:|meta:" "$logs/launch_phases.log"
  python3 "$root/bench/injector/launch_phases.py" "$logs/launch_phases.log" | tee "$logs/launch_phases.md"
  pack
fi
say "2. kill tests, default mode"
[[ -d /usr/local/cuda/bin ]] && export PATH="$PATH:/usr/local/cuda/bin"
nvcc -O2 -arch=sm_90 -o "$work/continuous_cuda" "$root/tests/gpu/continuous_cuda.cu" >"$logs/nvcc.txt" 2>&1
for v in $variants; do
  [[ $v == off ]] && continue
  timeout -k 5 "${KILL_TIMEOUT:-100}" python3 "$root/tests/gpu/kill_test.py" --lib "${libs[$v]}" \
    --cuda-bin "$work/continuous_cuda" --workloads "$wl" --out "$work/kill-$v" --modes pm \
    --kill-after "${KILL_AFTER:-2,9}" --programs "${KILL_PROGRAMS:-cuda,torch}" --json "$logs/kill-$v.json" \
    2>&1 | tee "$logs/kill-$v.txt" | grep -E "PASS|FAIL|Traceback|Error|kill_test" | sed "s/^/$v: /"
  rm -f "$work/kill-$v"/*.db*
  pack
done
if [[ ${SKIP_CHECKS:-0} != 1 ]]; then
  say "3. gpu_checks.py, default mode"
  timeout -k 5 "${CHECKS_TIMEOUT:-170}" python3 "$root/tests/gpu/gpu_checks.py" --achieved default \
    --case "${CHECK_CASES:-kernels,torch-count,numba,output}" \
    --lib "$lib" --launcher "$stage/bin/occtrace" --matrix "$stage/bin/launch_matrix" --work "$work/checks" \
    --workloads "$wl" --timeout 120 --json "$logs/default_checks.json" 2>&1 | tee "$logs/default_checks.log" | tail -25
  pack
fi
say "done"
