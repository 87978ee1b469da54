#!/usr/bin/env bash
# The default mode's GPU checks in one device call (issues #28, #29, #30), from a staged tree:
#
#   STAGE=gpu-stage-NAME WHEEL=gpu-stage-NAME/occtrace-*.whl bash gpu-stage-NAME/tests/gpu/default_mode_checks.sh
#
#  1. owners_all.sh: every framework traced in the default mode (PM sampling since #28),
#     each trace's owners checked (check_owners.py); OWNERS_DEADLINE_S/OWNERS_FINISH_S bound it.
#  2. gpu_checks.py with OCCTRACE_ACHIEVED left unset: the launch zoo's counts through injection,
#     LD_PRELOAD and the launcher, PyTorch counts, Numba, SIGTERM / SIGKILL / os._exit, output.
#  3. wheel_trace.sh: the pip wheel installed into a venv beside PyTorch's, a training run traced
#     with only what it installed (default mode).
# $OUT: owners_all.log/.tar, default_checks.log/.json, wheel_trace.log, default_mode.tgz (logs).
set -uo pipefail
name=default_mode
source "$(dirname "$0")/stage_env.sh"
started=$SECONDS
echo "== 1. owners (owners_all.sh) [$((SECONDS - started)) s]"
ACHIEVED=${OWNERS_ACHIEVED:-pm} DEADLINE_S=${OWNERS_DEADLINE_S:-200} FINISH_S=${OWNERS_FINISH_S:-270} \
  bash "$root/tests/gpu/owners_all.sh" 2>&1 | grep -E "PASS|FAIL|mismatch|checked|skipped|stopped|error" | tail -40
echo "== 2. gpu_checks.py, default mode [$((SECONDS - started)) s]"
[[ -d /usr/local/cuda/bin ]] && export PATH="$PATH:/usr/local/cuda/bin"
timeout -k 5 "${CHECKS_TIMEOUT:-170}" python3 "$root/tests/gpu/gpu_checks.py" --achieved default \
  --case "${CHECK_CASES:-kernels,torch-count,numba,sigterm,sigkill,os-exit,output}" \
  --lib "$lib" --launcher "$stage/bin/occtrace" --matrix "$stage/bin/launch_matrix" --work "$work/checks" \
  --workloads "$wl" --timeout 120 --json "$out/default_checks.json" 2>&1 | tee "$out/default_checks.log" | tail -25
echo "== 3. the wheel [$((SECONDS - started)) s]"
if [[ -n "${WHEEL:-}" ]]; then
  timeout -k 5 "${WHEEL_TIMEOUT:-120}" bash "$root/tests/gpu/wheel_trace.sh" "$WHEEL" 2>&1 | tail -25
else
  echo "no WHEEL given: skipped"
fi
tar -C "$work" -czf "$out/default_mode.tgz" logs checks 2>/dev/null
echo "done [$((SECONDS - started)) s]"
