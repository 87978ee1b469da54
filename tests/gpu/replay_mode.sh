#!/usr/bin/env bash
# Whether the range profiler's kernel replay leaves a per-launch cost after sampling, in one
# device call (issue #11): OCCTRACE_ACHIEVED_REPLAY=user against the default kernel replay.
#   STAGE=gpu-stage tests/gpu/replay_mode.sh
#   1. The same deterministic train_small.py run traced twice with every signature measured
#      (budget 100 %), kernel and user replay: tests/gpu/diag/replay_compare.py compares the
#      achieved occupancy of every configuration measured in both.
#   2. With a tree staged by stage_all.sh: user replay's achieved occupancy against Nsight
#      Compute on occ_kernels' accuracy cases (SKIP_NCU=1 leaves it out).
#   3. Step time in turns (turns_bench.py; TURN_WORKLOAD, default train_small.py with 100 steps
#      per turn): `off`, a second
#      `off` (the A/A control), `sample` with kernel replay and with user replay, each sampling
#      variant measured after it sampled every signature; CYCLES, REPEATS, TURNS_TIMEOUT.
# Writes $OUT/replay.txt (everything printed) and $OUT/replay.tgz (logs, JSON).
set -uo pipefail
name=replay
source "$(dirname "$0")/stage_env.sh"
exec > >(tee "$out/replay.txt") 2>&1
pack() { tar -C "$work" -czf "$out/replay.tgz" logs; }
trap pack EXIT

echo "== achieved occupancy, kernel replay against user replay (train_small.py, 300 steps)"
for replay in kernel user; do
  STEPS=300 CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$work/replay-$replay.db" OCCTRACE_SAMPLE_BUDGET=1 \
    OCCTRACE_ACHIEVED_REPLAY=$replay timeout 180 python3 "$wl/train_small.py" > "$logs/replay-$replay.log" 2>&1
  echo "-- $replay replay: exit $?, $(grep -c . "$logs/replay-$replay.log") lines of output; occtrace lines:"
  grep "^occtrace:" "$logs/replay-$replay.log" | head -5
done
python3 "$root/tests/gpu/diag/replay_compare.py" "$work/replay-kernel.db" "$work/replay-user.db"
echo "replay compare: exit $?"

# With a tree from stage_all.sh (its ach/ folder): occ_kernels' accuracy cases in `all` mode with
# user replay, against Nsight Compute (as validate_all.sh does for kernel replay). CUPTI's own
# kernel records in user replay (its WaitNs kernel) are left out of occtrace's side.
if [[ -x "$stage/ach/occ_kernels" && -z "${SKIP_NCU:-}" ]]; then
  echo "== achieved occupancy with user replay against ncu (occ_kernels accuracy, OCCTRACE_ACHIEVED=all)"
  CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$work/acc.db" OCCTRACE_ACHIEVED=all OCCTRACE_ACHIEVED_REPLAY=user \
    timeout 120 "$stage/ach/occ_kernels" accuracy >"$logs/acc_launches.txt" 2>"$logs/acc_err.txt"
  python3 "$stage/ach/occtrace_csv.py" "$work/acc.db" "$logs/acc_occtrace.csv" --skip-kernel WaitNs
  timeout 200 ncu --clock-control none --csv --print-kernel-base mangled \
    --metrics sm__warps_active.avg.pct_of_peak_sustained_active "$stage/ach/occ_kernels" accuracy \
    >"$logs/acc_ncu.csv" 2>&1
  python3 "$stage/ach/compare_ncu.py" "$logs/acc_launches.txt" "$logs/acc_occtrace.csv" "$logs/acc_ncu.csv" 2>&1 | tail -25
  echo "compare_ncu: exit ${PIPESTATUS[0]}"
fi

echo "== step time in turns"
timeout "${TURNS_TIMEOUT:-420}" python3 "$root/bench/injector/turns_bench.py" --lib "$lib" \
  --workload "${TURN_WORKLOAD:-train_small=$wl/train_small.py:100}" --no-torchprof \
  --variant "traced-again=traced:TURNS_SAME_AS=traced" \
  --variant "sample=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5" \
  --variant "sample-user=traced:OCCTRACE_ACHIEVED=sample,OCCTRACE_SAMPLE_BUDGET=0.5,OCCTRACE_ACHIEVED_REPLAY=user" \
  --only traced,traced-again,sample,sample-user --pool traced,traced-again \
  --repeats "${REPEATS:-1}" --cycles "${CYCLES:-1000}" --warm-s "${WARM_S:-20}" \
  --logs "$logs/turns" --json "$logs/turns.json" 2>&1 | tee "$logs/turns.txt" | grep -v " c[0-9]*: "
