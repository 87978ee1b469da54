#!/usr/bin/env bash
# The default mode's re-attach after sampling (injector/cupti_reattach.cc) on a GPU, in one
# device call. Run from the repository root with a staged tree (tests/gpu/stage.sh build
# gpu-stage); writes $OUT/reattach.tgz (logs, JSON) and prints the summary lines.
#   PART=checks tests/gpu/reattach.sh   reattach_checks.py (train_small.py: launches per
#                                       configuration equal to an `off` trace; continuous_cuda;
#                                       occ-report), then kill_test.py in `sample` mode at
#                                       KILL_AFTER (3,28: before and after the re-attach)
#   PART=turns  tests/gpu/reattach.sh   step time in turns: `off` twice (the A/A control),
#                                       `sample` (re-attach on, the default) and
#                                       sample-noreattach (OCCTRACE_ACHIEVED_REATTACH=0), every
#                                       variant against the mean of the two `off` processes;
#                                       TURN_ONLY may add setup-reattach (the profiler set up,
#                                       nothing measured, one re-attach forced: what re-attaching
#                                       itself leaves, OCCTRACE_ACHIEVED_REATTACH=force)
#                                       (sample-shared-noreattach went with the removed
#                                       OCCTRACE_CUPTI_PER_THREAD_BUFFERS switch);
#                                       TURN_WORKLOADS, CYCLES, REPEATS, WARM_S, TURNS_TIMEOUT
#   PART=all    both, checks first (CHECK_STEPS, default 15000; CHECK_SKIP_TRAIN=1: only the
#               CUDA program; SKIP_KILL=1: no kill tests)
set -uo pipefail
part="${PART:-all}"
name=reattach
source "$(dirname "$0")/stage_env.sh"
pack() { tar -C "$work" -czf "$out/reattach.tgz" logs; }
trap pack EXIT

if [[ "$part" == checks || "$part" == all ]]; then
  echo "== re-attach checks"
  nvcc -O2 -arch=sm_90 -o "$work/continuous_cuda" "$root/tests/gpu/continuous_cuda.cu" >"$logs/nvcc.txt" 2>&1
  timeout "${CHECKS_TIMEOUT:-260}" python3 "$root/tests/gpu/reattach_checks.py" --lib "$lib" --workloads "$wl" \
    --cuda-bin "$work/continuous_cuda" --report "$stage/bin/occ-report" --out "$work/checks" \
    --steps "${CHECK_STEPS:-15000}" ${CHECK_SKIP_TRAIN:+--skip-train} --json "$logs/reattach_checks.json" 2>&1 | tee "$logs/reattach_checks.txt"
  rm -f "$work"/checks/*.db*
  if [[ -z "${SKIP_KILL:-}" ]]; then
    echo "== kill tests, sample mode (re-attach on)"
    timeout "${KILL_TIMEOUT:-150}" python3 "$root/tests/gpu/kill_test.py" --lib "$lib" --cuda-bin "$work/continuous_cuda" \
      --workloads "$wl" --out "$work/kill" --modes sample --kill-after "${KILL_AFTER:-3,28}" --json "$logs/kill.json" \
      2>&1 | tee "$logs/kill.txt" | grep -E "PASS|FAIL|Traceback|Error"
    rm -f "$work"/kill/*.db*
  fi
  pack
fi

if [[ "$part" == turns || "$part" == all ]]; then
  echo "== step time in turns"
  timeout "${TURNS_TIMEOUT:-300}" python3 "$root/bench/injector/turns_bench.py" --lib "$lib" \
    ${TURN_WORKLOADS:---workload "train_small=$wl/train_small.py:100"} --no-torchprof \
    --variant "traced-again=traced:TURNS_SAME_AS=traced" \
    --variant "sample=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5" \
    --variant "sample-noreattach=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5,OCCTRACE_ACHIEVED_REATTACH=0" \
    --variant "setup-reattach=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5,OCCTRACE_ACHIEVED_MAX_SIGNATURES=0,OCCTRACE_ACHIEVED_REATTACH=force" \
    --only "${TURN_ONLY:-traced,traced-again,sample,sample-noreattach}" \
    $([[ ",${TURN_ONLY:-traced-again}," == *,traced-again,* ]] && echo --pool traced,traced-again) \
    --repeats "${REPEATS:-1}" --cycles "${CYCLES:-400}" --warm-s "${WARM_S:-35}" \
    --logs "$logs/turns" --json "$logs/turns.json" 2>&1 | tee "$logs/turns.txt" | tail -45
  pack
fi
