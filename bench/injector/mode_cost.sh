#!/usr/bin/env bash
# Step-time cost of every tracing mode, in turns (turns_bench.py), for docs/performance.md's
# first table (issues #28 and #31): one workload per device call, from a staged tree
# (tests/gpu/stage.sh BUILD_DIR gpu-stage-NAME):
#
#   WORKLOAD=resnet50    STAGE=gpu-stage-NAME bash gpu-stage-NAME/bench/injector/mode_cost.sh
#   WORKLOAD=train_small STAGE=gpu-stage-NAME bash gpu-stage-NAME/bench/injector/mode_cost.sh
#
# Variants: untraced; bare-cupti (CUPTI kernel records, thrown away); traced (occtrace
# OCCTRACE_ACHIEVED=off) and traced-again (a second such process: the A/A control, and every
# variant is also given against the mean of the two); default (occtrace as a user runs it,
# OCCTRACE_ACHIEVED unset: PM sampling at 20 us); light (OCCTRACE_MODE=light
# OCCTRACE_LIGHT_DETACH=1, achieved occupancy unset, i.e. not measured); torchprof
# (torch.profiler, CUDA activity only); default-unbounded (the default mode with
# OCCTRACE_SAMPLE_BUDGET=1: PM sampling never paused, as before its CPU bound; run only when
# VARIANTS names it); default-paused (OCCTRACE_SAMPLE_BUDGET=0.0001: the free first 5 s of
# sampling, then stopped to the end, before the turns begin: what an enabled but stopped sampler
# costs; only when VARIANTS names it). VARIANTS=a,b,... runs only those (bare-cupti included only when named).
# TRACES=DIR keeps the traced processes' traces there. REPEATS fresh process sets of CYCLES cycles each
# (default 2 x 100 = 200 cycles), each figure given over all cycles, over the cycles that began
# in each process's first FIRST_S (60) s, and over the later ones (steady state).
#
# Wall time on an H100 (7 turns a cycle; past turns runs in bench/results/ saw ResNet-50 at
# 14-30 ms/step, torch.profiler ~20 % more, and train_small.py at 0.5-3.5 ms/step):
#   resnet50, 6 steps a turn: at 26 ms/step ~1.15 s a cycle, 100 cycles ~115 s a process set,
#     plus ~60 s a set for 7 processes to start together (~20 s), to warm up one after another
#     (WARM_S, 2 s, each; the first steps tune cuDNN) and to close (torch.profiler parses its
#     events at exit): ~175 s a set, ~350 s for two, ~390 s with this script's start-up (~30 s:
#     stage_env.sh looks for libcupti and imports torch). 8 steps a turn, as pm_measure.sh uses,
#     would take ~1.5 s a cycle and ~450 s: past the turns' time limit below, so fewer than 200
#     cycles; hence 6.
#   train_small, 60 steps a turn: at 3.5 ms/step ~1.5 s a cycle, ~195 s a set, ~420 s in all
#     (at 1.2 ms/step ~230 s). 100 steps a turn, as pm_measure.sh uses, would take ~600 s at
#     3.5 ms/step; hence 60.
# Both give turns of 0.1-0.2 s. STEPS_PER_TURN overrides.
# CORES=N: CPUs per process (default: the CPUs shared out, 16 / 7 = 2 each; more than fit for
# all 7 leaves placement to the kernel). The default mode's PM thread takes about a core of its own.
# Time limits: turns_bench.py starts no cycle after TURNS_TIMEOUT (540 s, counted from this
# script's start) less 75 s, which leaves time to close the processes and summarize; `timeout`
# sends SIGTERM at TURNS_TIMEOUT (the run stops after the cycle in progress and still writes its
# summary) and SIGKILL 10 s later. The whole call ends within ~550 s.
#
# $OUT: mode_cost_WORKLOAD.log (env facts: date, GPU, driver, clocks, torch; then turns_bench's
# output) and mode_cost_WORKLOAD.json (turns_bench's JSON, plus "env" and "command").
# bench/injector/turns_to_table.py makes the Markdown table from one or both JSON files.
set -uo pipefail
name=mode_cost
source "$(dirname "$0")/../../tests/gpu/stage_env.sh"
workload=${WORKLOAD:-resnet50}
case $workload in
  resnet50) spec="resnet50=$wl/resnet50_step.py:${STEPS_PER_TURN:-6}" ;;
  train_small) spec="train_small=$wl/train_small.py:${STEPS_PER_TURN:-60}" ;;
  *) echo "mode_cost: WORKLOAD=$workload is not resnet50 or train_small" >&2; exit 2 ;;
esac
log="$out/mode_cost_$workload.log"
json="$out/mode_cost_$workload.json"
cp "$logs/env.txt" "$log"
only=${VARIANTS:-untraced,traced,traced-again,default,light,torchprof}
bare="$stage/bin/libbare_cupti_injection.so"
if [[ -n "${VARIANTS:-}" ]]; then
  [[ ",$VARIANTS," == *,bare-cupti,* ]] || bare=  # VARIANTS names every variant to run
elif [[ -f "$bare" ]]; then
  only="$only,bare-cupti"
else
  echo "mode_cost: $bare not staged: no bare-cupti variant" | tee -a "$log"
  bare=
fi
limit=$(( ${TURNS_TIMEOUT:-540} - SECONDS ))  # SECONDS: this script's time so far (stage_env.sh)
stop=$(( limit > 150 ? limit - 75 : limit / 2 ))  # the last cycle's start: room to close and summarize
command="${VARIANTS:+VARIANTS=$VARIANTS }${CORES:+CORES=$CORES }WORKLOAD=$workload CYCLES=${CYCLES:-100} REPEATS=${REPEATS:-2} STEPS_PER_TURN=${spec##*:} bash bench/injector/mode_cost.sh"
echo "== $command (cycles start for $stop s, SIGTERM at $limit s)" | tee -a "$log"
timeout -k 10 "$limit" python3 "$root/bench/injector/turns_bench.py" --lib "$lib" --workload "$spec" \
  ${bare:+--bare-cupti "$bare"} ${TRACES:+--traces "$TRACES"} \
  --variant "traced-again=traced:TURNS_SAME_AS=traced" \
  --variant "default=traced:OCCTRACE_ACHIEVED=" \
  --variant "default-unbounded=traced:OCCTRACE_ACHIEVED=,OCCTRACE_SAMPLE_BUDGET=1" \
  --variant "default-paused=traced:OCCTRACE_ACHIEVED=,OCCTRACE_SAMPLE_BUDGET=0.0001" \
  --variant "light=traced:OCCTRACE_MODE=light,OCCTRACE_LIGHT_DETACH=1,OCCTRACE_ACHIEVED=" \
  --only "$only" --pool traced,traced-again \
  --repeats "${REPEATS:-2}" --cycles "${CYCLES:-100}" --warm-s-unsampled "${WARM_S:-2}" \
  --first-s "${FIRST_S:-60}" --stop-after-s "$stop" ${CORES:+--cores-per-process "$CORES"} \
  --logs "$logs/turns" --json "$json" >>"$log" 2>&1
echo "mode_cost: turns_bench exit $? after ${SECONDS} s" | tee -a "$log"
# The run's facts beside its figures, for the table's caption.
[[ -f "$json" ]] && python3 - "$json" "$logs/env.txt" "$command" <<'PY'
import json, sys
path, env, command = sys.argv[1:]
with open(path) as f:
    results = json.load(f)
results["env"] = open(env).read()
results["command"] = command
with open(path, "w") as f:
    json.dump(results, f, indent=1)
PY
# The summary (everything after the per-cycle lines) on the console.
grep -v -E '^  [a-z_0-9]+ r[0-9]+ c[0-9]+:' "$log" | tail -70
