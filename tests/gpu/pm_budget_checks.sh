#!/usr/bin/env bash
# PM sampling's CPU bound (OCCTRACE_SAMPLE_BUDGET, pm_collector.h) on a real GPU, in one device
# call, from a staged tree:   STAGE=gpu-stage-NAME bash gpu-stage-NAME/tests/gpu/pm_budget_checks.sh
#
#  1. train_small.py for ~50 s in the default mode: the collector pauses and restarts on real
#     CUPTI (pm_pauses > 0, no decode error, status on), the samples come in windows (gaps in
#     OCC_PM_SAMPLE), the share sampled is free time + 5 % of the run, validate_trace.py passes,
#     and occtrace's CPU (decode + writer) against the run's length.
#  2. ResNet-50 for ~60 s: coverage (pm_checks.py attribute: GPU time in configurations with
#     >= 20 clean samples) with the budget (the default) and with OCCTRACE_SAMPLE_BUDGET=1 (never
#     paused, as before the budget), and a 20-step run (inside the free time).
#  3. torch.compile model (compiled_model.py): its compilation idles the GPU at the start.
#  4. gpu_checks.py in the default mode: the launch zoo's counts, SIGTERM / SIGKILL, output.
# $OUT: pm_budget.log (the console) and pm_budget.tgz (logs, JSON, the smaller traces).
set -uo pipefail
name=pm_budget
source "$(dirname "$0")/stage_env.sh"
exec > >(tee "$out/pm_budget.log") 2>&1
traces="$work/traces"
mkdir -p "$traces"
pack() { tar -C "$work" -czf "$out/pm_budget.tgz" logs $(cd "$work" && find traces -name '*.db' -size -6M) 2>/dev/null; }
trap pack EXIT
checks="$root/tests/gpu/pm_checks.py"
started=$SECONDS
say() { echo "== $* [$((SECONDS - started)) s]"; }
trace() {  # trace LABEL ENV... -- CMD...: the default mode into $traces/LABEL.db; wall seconds in $logs/LABEL.wall
  local label=$1; shift
  local env=()
  while [[ $1 != -- ]]; do env+=("$1"); shift; done
  shift
  local t0=$SECONDS
  timeout -k 5 150 env "${env[@]}" OCCTRACE_OUTPUT="$traces/$label.db" CUDA_INJECTION64_PATH="$lib" "$@" \
    >"$logs/$label.out" 2>"$logs/$label.err"
  echo "$label: exit $? in $((SECONDS - t0)) s; stderr: $(grep -c . "$logs/$label.err") lines"
  grep occtrace "$logs/$label.err" | head -5
}
meta() {  # meta DB KEY...: the OCC_META values
  local db=$1; shift
  for k in "$@"; do printf '%s=%s ' "$k" "$(sqlite3 "$db" "SELECT value FROM OCC_META WHERE name='$k'" 2>/dev/null)"; done
  echo
}
windows() {  # the windows in a trace's PM rows: runs of samples separated by > 100 ms of none
  python3 - "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
starts = [r[0] for r in db.execute("SELECT start FROM OCC_PM_SAMPLE ORDER BY start")]
if not starts:
    print("windows: no PM rows"); sys.exit()
gaps = [(b - a) / 1e9 for a, b in zip(starts, starts[1:]) if b - a > 100_000_000]
runs, first = [], starts[0]
prev = first
for s in starts[1:]:
    if s - prev > 100_000_000:
        runs.append((prev - first) / 1e9); first = s
    prev = s
runs.append((prev - first) / 1e9)
print(f"windows: {len(runs)} runs of active samples; first {runs[0]:.2f} s; later ones median "
      f"{sorted(runs[1:])[len(runs[1:]) // 2] if runs[1:] else 0:.2f} s; gaps median "
      f"{sorted(gaps)[len(gaps) // 2] if gaps else 0:.2f} s; span {(starts[-1] - starts[0]) / 1e9:.1f} s")
PY
}

say "1. train_small.py, ~40 s, default mode"
trace ts_default STEPS=${TS_STEPS:-12000} -- python3 "$wl/train_small.py"
meta "$traces/ts_default.db" pm_status pm_budget pm_pauses pm_reopens pm_decode_errors pm_overflows \
  pm_sampling_ms pm_run_ms pm_samples pm_samples_lost pm_decode_ms pm_writer_ms launch_count
windows "$traces/ts_default.db"
cat "$logs/ts_default.out"
python3 "$root/tests/gpu/validate_trace.py" "$traces/ts_default.db" 2>&1 | tail -3
python3 "$checks" attribute "$traces/ts_default.db" --json "$logs/ts_default_attr.json" --top 5

say "2. ResNet-50: ~60 s with the budget, the same never paused, and 20 steps"
trace rn_long STEPS=${RN_STEPS:-1800} -- python3 "$wl/resnet50_step.py"
trace rn_long_full STEPS=${RN_STEPS:-1800} OCCTRACE_SAMPLE_BUDGET=1 -- python3 "$wl/resnet50_step.py"
trace rn_short STEPS=20 -- python3 "$wl/resnet50_step.py"
for t in rn_long rn_long_full rn_short; do
  echo "-- $t: $(grep steps/s "$logs/$t.out")"
  meta "$traces/$t.db" pm_budget pm_pauses pm_reopens pm_decode_errors pm_overflows pm_sampling_ms pm_run_ms \
    pm_samples pm_samples_lost pm_decode_ms pm_writer_ms
  windows "$traces/$t.db"
  python3 "$checks" attribute "$traces/$t.db" --json "$logs/${t}_attr.json" --top 3
done

say "3. torch.compile model"
trace compiled -- python3 "$wl/compiled_model.py"
meta "$traces/compiled.db" pm_budget pm_pauses pm_sampling_ms pm_run_ms pm_samples pm_decode_errors
windows "$traces/compiled.db"
python3 "$checks" attribute "$traces/compiled.db" --json "$logs/compiled_attr.json" --top 3

say "4. gpu_checks.py, default mode"
[[ -d /usr/local/cuda/bin ]] && export PATH="$PATH:/usr/local/cuda/bin"
timeout -k 5 "${CHECKS_TIMEOUT:-200}" python3 "$root/tests/gpu/gpu_checks.py" --achieved default \
  --case "${CHECK_CASES:-kernels,sigterm,sigkill,output}" \
  --lib "$lib" --launcher "$stage/bin/occtrace" --matrix "$stage/bin/launch_matrix" --work "$work/checks" \
  --workloads "$wl" --timeout 120 --json "$logs/default_checks.json" >"$logs/default_checks.log" 2>&1
echo "gpu_checks exit $?"; tail -8 "$logs/default_checks.log"
say "done"
