#!/usr/bin/env bash
# The launch hook (injector/tracer/launch_hook.h) in light tracing on a GPU, in one device call: the
# hook records launches while CUPTI is detached between windows (OCCTRACE_LIGHT_DETACH=1).
# Writes logs to $OUT/hook.tgz and the summary to $OUT/hook.txt. The variants of the removed
# experiment switches (OCCTRACE_LIGHT_HOOK=1 alone, OCCTRACE_LIGHT_CALLBACK_WORK,
# OCCTRACE_LIGHT_CAPTURE_CALLBACKS: light-hook, light-hook-nowindows, light-hook-nocap,
# light-detach-nowork) are gone with them; their last figures are in bench/results.
#   STAGE=gpu-stage tests/gpu/light_hook.sh
# Parts (SKIP_CHECKS, SKIP_LAUNCH, SKIP_TURNS=1 leave one out):
#   1. light_checks.py with CUPTI detached between windows (the hook; LIGHT_DETACH=0: light
#      tracing with CUPTI's callbacks alone): launch counts per configuration equal to a full
#      trace, estimates within 5 % (LIGHT_ONLY picks programs); every light trace's
#      light_hook_* and light_detach_* rows (ids learned equal, re-attaches, finalize times).
#      GAP_KERNEL=NAME: each configuration of kernel NAME, full trace against light samples
#      (tests/gpu/diag/estimate_gap.py).
#   2. empty-kernel launch cost: untraced, `off`, light (CUPTI callbacks), light with CUPTI
#      detached.
#   3. step time in turns (turns_bench.py): untraced, `off`, light, light-detach, on
#      TURN_WORKLOADS (train_small by default), CYCLES, REPEATS; TURN_ONLY adds `sample` (the
#      default: CUPTI's profiler session ends while parked) and `sample` keeping the session
#      (sample-keep). Leave the
#      summary time: TURNS_TIMEOUT must cover start-up, warm-ups and every cycle. To take light
#      tracing's cost apart: cupti-inject (CUPTI loaded, nothing enabled), cupti-attach (a
#      subscriber, nothing enabled), bare-cupti (kernel records alone), light-detach (CUPTI
#      detached between windows),
#      light-detach-sample (the same, achieved occupancy sampled first, detaching once it rests),
#      light-detach-30s (a window every 30 s instead of 5 s: what the windows' attach, records
#      and finalize cost, against the hook's recording and the writer);
#      untraced-again, a second untraced process (the A/A control: every variant is then also
#      compared with the mean of the two untraced processes), e.g.
#      TURN_ONLY=untraced,cupti-inject,cupti-attach,light,light-detach
#      What CUPTI costs after it was used, and whether detaching gives it back
#      (bench/injector/bare_cupti_phases.h): cupti-callbacks-off, cupti-records-off,
#      cupti-records-detach, cupti-windows-keep, cupti-windows-detach; cupti-ids checks that
#      CUPTI's context and stream ids and clock match the driver's and the C library's.
set -uo pipefail
name=hook
source "$(dirname "$0")/stage_env.sh"
exec > >(tee "$out/hook.txt") 2>&1
pack() { tar -C "$work" -czf "$out/hook.tgz" logs; }
trap pack EXIT

if [[ -z "${SKIP_CHECKS:-}" ]]; then
  echo "== light vs full traces, light with CUPTI detached between windows (the launch hook)"
  OCCTRACE_LIGHT_DETACH="${LIGHT_DETACH:-1}" timeout "${CHECKS_TIMEOUT:-240}" python3 "$root/tests/gpu/light_checks.py" --lib "$lib" \
    --launch-matrix "$stage/bin/launch_matrix" --workloads "$wl" --out "$work/light" --json "$logs/light_checks.json" \
    --only "${LIGHT_ONLY:-launch_matrix,train_small,compiled_graphs,numba}" 2>&1 | tee "$logs/light_checks.txt" | grep -E "PASS|FAIL|==|Traceback|Error" 
  # GAP_KERNEL=NAME: why the estimate of NAME's configurations differs (tests/gpu/diag/estimate_gap.py).
  if [[ -n "${GAP_KERNEL:-}" ]]; then
    for light_db in "$work"/light/*-light.db; do
      echo "-- estimate gap, $(basename "$light_db"), $GAP_KERNEL:"
      python3 "$root/tests/gpu/diag/estimate_gap.py" "${light_db%-light.db}-full.db" "$light_db" "$GAP_KERNEL" 2>&1 | tee -a "$logs/estimate_gap.txt"
    done
  fi
  for db in "$work"/light/*-light.db; do
    echo "-- $(basename "$db"):"
    python3 - "$db" <<'PY'
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
for k, v in con.execute("SELECT name, value FROM OCC_META WHERE name LIKE 'light_hook%' OR name LIKE 'light_detach%' OR name LIKE 'light_reattach%' OR name LIKE 'light_finalize%' OR name IN ('launch_count','light_captured_launches','achieved_mode') ORDER BY name"):
    print(f"   {k} = {v}")
PY
  done
  pack
fi

if [[ -z "${SKIP_LAUNCH:-}" ]]; then
  echo "== empty-kernel launch cost"
  timeout "${LAUNCH_TIMEOUT:-150}" python3 "$root/bench/injector/gpu_bench.py" --lib "$lib" --launch-overhead "$stage/bin/launch_overhead" \
    --train "$wl/train_small.py" --skip-train --rounds "${LAUNCH_ROUNDS:-3}" --launches 200000 --skip-bare-cupti --no-torchprof \
    --variant "light=traced:OCCTRACE_MODE=light" \
    --variant "light-detach=traced:OCCTRACE_MODE=light,OCCTRACE_LIGHT_DETACH=1" \
    --json "$logs/launch.json" 2>&1 | tee "$logs/launch.txt" | tail -25
  pack
fi

if [[ -z "${SKIP_TURNS:-}" ]]; then
  echo "== step time in turns"
  timeout "${TURNS_TIMEOUT:-300}" python3 "$root/bench/injector/turns_bench.py" --lib "$lib" \
    ${TURN_WORKLOADS:---workload "train_small=$wl/train_small.py:100"} --no-torchprof \
    --bare-cupti "$stage/bin/libbare_cupti_injection.so" \
    --variant "cupti-inject=bare-cupti:BARE_CUPTI_MODE=inject" \
    --variant "cupti-attach=bare-cupti:BARE_CUPTI_MODE=attach" \
    --variant "cupti-callbacks-off=bare-cupti:BARE_CUPTI_MODE=callbacks-off" \
    --variant "cupti-records-off=bare-cupti:BARE_CUPTI_MODE=records-off" \
    --variant "cupti-records-detach=bare-cupti:BARE_CUPTI_MODE=records-detach" \
    --variant "cupti-windows-keep=bare-cupti:BARE_CUPTI_MODE=windows-keep" \
    --variant "cupti-windows-detach=bare-cupti:BARE_CUPTI_MODE=windows-detach" \
    --variant "cupti-ids=bare-cupti:BARE_CUPTI_MODE=ids" \
    --variant "untraced-again=untraced:TURNS_SAME_AS=untraced" \
    --variant "light=traced:OCCTRACE_MODE=light" \
    --variant "light-detach=traced:OCCTRACE_MODE=light,OCCTRACE_LIGHT_DETACH=1" \
    --variant "light-detach-sample=traced:OCCTRACE_MODE=light,OCCTRACE_LIGHT_DETACH=1,OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5" \
    --variant "light-detach-30s=traced:OCCTRACE_MODE=light,OCCTRACE_LIGHT_DETACH=1,OCCTRACE_LIGHT_PERIOD_MS=30000" \
    --variant "sample=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5" \
    --variant "sample-keep=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5,OCCTRACE_ACHIEVED_PARK_DEINIT=0" \
    --only "${TURN_ONLY:-untraced,traced,light,light-detach}" \
    $([[ ",${TURN_ONLY:-}," == *,untraced-again,* ]] && echo --pool untraced,untraced-again) \
    --repeats "${REPEATS:-2}" --cycles "${CYCLES:-60}" --warm-s "${WARM_S:-25}" --warm-s-unsampled "${WARM_S_UNSAMPLED:-8}" \
    --logs "$logs/turns" --json "$logs/turns.json" 2>&1 | tee "$logs/turns.txt" | tail -40
fi
