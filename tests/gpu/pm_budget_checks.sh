#!/usr/bin/env bash
# PM sampling's CPU bound (OCCTRACE_SAMPLE_BUDGET, pm_collector.h) on a real GPU, in one device
# call, from a staged tree:   STAGE=gpu-stage-NAME bash gpu-stage-NAME/tests/gpu/pm_budget_checks.sh
#
#  1. ResNet-50 in turns, CPUs unpinned: untraced, `off` twice (A/A), the default mode
#     (mode_cost.sh, VARIANTS), keeping the traces.
#  2. The same with two CPUs pinned per process (CORES=2): the case where the collector's CPU
#     showed in step time before the bound (1.09 x `off`, H200, 2026-11-28).
#  3. The default processes' traces: coverage by occ-report (GPU time in configurations with an
#     achieved figure), the bound's facts (pm_sampling_ms of pm_run_ms, pm_pauses) and the
#     collector's CPU (pm_decode_ms, pm_writer_ms), pm_coverage.py.
# RUNS ("unpinned cores2") picks runs, WORKLOAD (resnet50) the workload (or train_small). Each turns
# run is given TURNS_TIMEOUT (235 s). $OUT: pm_budget.log, and per run
# {unpinned,cores2}/mode_cost_WORKLOAD.{log,json}.
set -uo pipefail
name=pm_budget
source "$(dirname "$0")/stage_env.sh"
exec > >(tee "$out/pm_budget.log") 2>&1
variants=untraced,traced,traced-again,default
workload=${WORKLOAD:-resnet50}
for run in ${RUNS:-unpinned cores2}; do
  say "$run: $workload in turns ($variants)"
  cores=; [[ $run == cores2 ]] && cores=2
  OUT="$out/$run" TRACES="$work/$run" VARIANTS=$variants CORES=$cores WORKLOAD=$workload \
    CYCLES=${CYCLES:-100} REPEATS=${REPEATS:-2} TURNS_TIMEOUT=${TURNS_TIMEOUT:-235} \
    bash "$root/bench/injector/mode_cost.sh" 2>&1 | grep -E "vs traced|default|traced-again|cycles|exit" | head -30
done
say "coverage and the bound's facts of the default processes"
for run in ${RUNS:-unpinned cores2}; do
  for db in "$work/$run"/*-default-*.db; do
    [[ -f "$db" ]] && timeout 60 python3 "$root/tests/gpu/pm_coverage.py" "$stage/bin/occ-report" "$db"
  done
done
say "done"
