#!/usr/bin/env bash
# One GPU run's worth of checks for light tracing and for the default mode's cost. Run from the
# repository root on a GPU machine with a staged tree (tests/gpu/stage.sh build gpu-stage):
#
#   PART=checks tests/gpu/light_and_cost.sh   light vs full traces of launch_matrix, PyTorch
#                                              eager, torch.compile + CUDA graphs, Numba
#                                              (light_checks.py; SKIP_LIGHT_CHECKS=1 leaves them
#                                              out); kill tests in KILL_MODES (sample,light) at
#                                              KILL_AFTER (2,6) s; empty-kernel launch cost
#   PART=turns  tests/gpu/light_and_cost.sh   step time in turns (turns_bench.py), train_small
#                                              and ResNet-50: untraced, bare CUPTI, off,
#                                              torch.profiler, sample, light; REPEATS, CYCLES,
#                                              WARM_S (25 s: ResNet-50 needs ~9 s of profiling at a
#                                              50 % budget), TURN_WORKLOADS (--workload args),
#                                              TURN_ONLY (e.g. traced,sample: shorter cycles;
#                                              traced-again: a second `off` process, the A/A
#                                              control, and every variant against the mean of
#                                              the two `off` processes; sample-setup-only: the
#                                              range profiler set up on occtrace's setup thread,
#                                              nothing measured; sample-setup-inline: the same
#                                              on the program's thread; sample-keep: the profiler session kept;
#                                              light-detach: light tracing with CUPTI detached
#                                              between windows; light-detach-sample: the same
#                                              with achieved occupancy sampled first)
#   PART=bench  tests/gpu/light_and_cost.sh   step time, ResNet-50 and train_small: untraced,
#                                              bare CUPTI (NO_BARE_CUPTI=1 leaves it out), full
#                                              off, full sample, light; ROUNDS, RESNET_ROUNDS,
#                                              STEPS, RESNET_STEPS, WARMUP_S
#
# Writes $OUT/<part>.tgz (logs, JSON, light-check traces) and prints the summary lines.
set -uo pipefail
part="${PART:-checks}"
name=light
source "$(dirname "$0")/stage_env.sh"
light_sample="light=traced:OCCTRACE_MODE=light,OCCTRACE_ACHIEVED=sample"
light_off="light-noachieved=traced:OCCTRACE_MODE=light"

if [[ "$part" == checks ]]; then
  echo "== light vs full traces"
  [[ -z "${SKIP_LIGHT_CHECKS:-}" ]] && timeout 330 python3 "$root/tests/gpu/light_checks.py" --lib "$lib" --launch-matrix "$stage/bin/launch_matrix" \
    --workloads "$wl" --out "$work/light" --json "$logs/light_checks.json" ${LIGHT_ONLY:+--only "$LIGHT_ONLY"} \
    2>&1 | tee "$logs/light_checks.txt"
  for f in "$work"/light/*.db; do gzip -1 "$f"; done
  tar -C "$work" -czf "$out/checks.tgz" logs light
  [[ -n "${SKIP_KILL:-}" ]] && exit 0
  echo "== kill tests: sample (per-thread CUPTI buffers) and light"
  nvcc -O2 -arch=sm_90 -o "$work/continuous_cuda" "$root/tests/gpu/continuous_cuda.cu" >"$logs/nvcc.txt" 2>&1
  timeout 150 python3 "$root/tests/gpu/kill_test.py" --lib "$lib" --cuda-bin "$work/continuous_cuda" --workloads "$wl" \
    --out "$work/kill" --modes "${KILL_MODES:-sample,light}" --kill-after "${KILL_AFTER:-2,6}" --json "$logs/kill.json" 2>&1 | tee "$logs/kill.txt"
  rm -f "$work"/kill/*.db*
  echo "== empty-kernel launch cost"
  timeout 120 python3 "$root/bench/injector/gpu_bench.py" --lib "$lib" --launch-overhead "$stage/bin/launch_overhead" \
    --train "$wl/train_small.py" --skip-train --rounds 3 --launches 200000 --achieved-sample \
    --bare-cupti "$stage/bin/libbare_cupti_injection.so" --variant "$light_sample" --variant "$light_off" \
    --json "$logs/launch.json" 2>&1 | tee "$logs/launch.txt"
  tar -C "$work" -czf "$out/checks.tgz" logs light
elif [[ "$part" == turns ]]; then
  echo "== step-time benchmark in turns (bench/injector/turns_bench.py)"
  # The log goes to $OUT as it is written: a run cut off by its time limit keeps its cycles.
  timeout "${TURNS_TIMEOUT:-560}" python3 "$root/bench/injector/turns_bench.py" --lib "$lib" \
    ${TURN_ONLY:+--only "$TURN_ONLY"} ${TURN_WORKLOADS:---workload "train_small=$wl/train_small.py:100" --workload "resnet50=$wl/resnet50_step.py:12"} \
    --bare-cupti "$stage/bin/libbare_cupti_injection.so" \
    --variant "sample=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5" \
    --variant "sample-keep=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5,OCCTRACE_ACHIEVED_PARK_DEINIT=0" \
    --variant "traced-again=traced:TURNS_SAME_AS=traced" \
    --variant "sample-setup-only=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5,OCCTRACE_ACHIEVED_MAX_SIGNATURES=0" \
    --variant "sample-setup-inline=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5,OCCTRACE_ACHIEVED_MAX_SIGNATURES=0,OCCTRACE_ACHIEVED_BACKGROUND_SETUP=0" \
    --variant "light=traced:OCCTRACE_MODE=light,OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5" \
    --variant "light-detach=traced:OCCTRACE_MODE=light,OCCTRACE_LIGHT_DETACH=1" \
    --variant "light-detach-sample=traced:OCCTRACE_MODE=light,OCCTRACE_LIGHT_DETACH=1,OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5" \
    --repeats "${REPEATS:-2}" --cycles "${CYCLES:-30}" --warm-s "${WARM_S:-25}" ${BENCH_ARGS:-} \
    $([[ ",${TURN_ONLY:-}," == *,traced-again,* ]] && echo --pool traced,traced-again) \
    --logs "$logs/turns" --json "$logs/turns.json" 2>&1 | tee "$out/turns.txt"
  cp "$out/turns.txt" "$logs/"
  tar -C "$work" -czf "$out/turns.tgz" logs
else
  echo "== step-time benchmark"
  # A sampling budget of 50 % measures every signature within seconds, so that the timed steps
  # after WARMUP_S are the steady state of both sample-mode variants.
  timeout 590 python3 "$root/bench/injector/gpu_bench.py" --lib "$lib" --launch-overhead "$stage/bin/launch_overhead" \
    --train "$wl/train_small.py" --resnet "$wl/resnet50_step.py" --skip-launch --no-torchprof \
    ${NO_BARE_CUPTI:+--skip-bare-cupti} --bare-cupti "$stage/bin/libbare_cupti_injection.so" \
    --rounds "${ROUNDS:-3}" --steps "${STEPS:-2000}" --resnet-rounds "${RESNET_ROUNDS:-${ROUNDS:-3}}" \
    --resnet-steps "${RESNET_STEPS:-150}" --warmup-s "${WARMUP_S:-12}" \
    --variant "sample=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5" \
    --variant "light=traced:OCCTRACE_MODE=light,OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5" \
    ${BENCH_ARGS:-} --json "$logs/bench.json" 2>&1 | tee "$out/bench.txt"
  # The log goes to $OUT as it is written: a run cut off by its time limit keeps its rounds.
  cp "$out/bench.txt" "$logs/"
  tar -C "$work" -czf "$out/bench.tgz" logs
fi
