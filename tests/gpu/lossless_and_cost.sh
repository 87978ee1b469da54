#!/usr/bin/env bash
# One GPU run's worth of checks for lossless tracing and the default mode's cost, plus the real
# traces occ-report's golden tests are made from. Run from the repository root on a GPU machine
# with a staged tree (tests/gpu/stage.sh build gpu-stage):
#
#   PART=kill  tests/gpu/lossless_and_cost.sh   kill tests (torch + plain CUDA; off/sample/all;
#                                                SIGKILL at 2/5/9 s) + the legacy age-0 runs +
#                                                one flush-diagnostic run; real traces (Numba block
#                                                sweep, torch.compile model, ResNet-50)
#   PART=bench tests/gpu/lossless_and_cost.sh   step-time benchmark: train_small + ResNet-50,
#                                                untraced / bare CUPTI / off / sample / torch.profiler
#
# Writes $OUT/<part>.tgz (logs, JSON, traces as .sql) and prints the summary lines.
set -uo pipefail
part="${PART:-kill}"
name=lossless
source "$(dirname "$0")/stage_env.sh"

dump_sql() {  # trace.db -> trace.sql (what examples/ and tests/ keep)
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
with open(sys.argv[2], "w") as f:
    for line in con.iterdump():
        f.write(line + "\n")
PY
}

if [[ "$part" == kill ]]; then
  nvcc -O2 -arch=sm_90 -o "$work/continuous_cuda" "$root/tests/gpu/continuous_cuda.cu" >"$logs/nvcc.txt" 2>&1
  echo "== flush diagnostic: continuous torch loop, sample mode, record age 0 (before) and 500 ms"
  for age in 0 500; do
    OCCTRACE_DEBUG_FLUSH=1 OCCTRACE_MAX_RECORD_AGE_MS=$age CUDA_INJECTION64_PATH="$lib" \
      OCCTRACE_OUTPUT="$work/diag-age$age.db" timeout -s KILL 12 python3 "$wl/continuous_torch.py" \
      >/dev/null 2>"$logs/diag-age$age.stderr"
    echo "age $age: $(grep -c 'forced=yes' "$logs/diag-age$age.stderr") forced flushes; last flush lines:"
    grep 'flush t=' "$logs/diag-age$age.stderr" | tail -n 4
  done
  echo "== kill tests"
  python3 "$root/tests/gpu/kill_test.py" --lib "$lib" --cuda-bin "$work/continuous_cuda" --workloads "$wl" \
    --out "$work/kill" --legacy --json "$logs/kill.json" 2>&1 | tee "$logs/kill.txt"
  rm -f "$work"/kill/*.db*
  echo "== real traces for occ-report"
  traces="$work/traces"; mkdir -p "$traces"
  run_traced() {  # name, command...
    local name="$1"; shift
    CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$traces/$name.db" "$@" >"$logs/trace-$name.out" 2>&1
    echo "$name: exit $? $(tail -n 2 "$logs/trace-$name.out" | tr '\n' ' ')"
    [[ -f "$traces/$name.db" ]] && dump_sql "$traces/$name.db" "$traces/$name.sql" && rm -f "$traces/$name.db"
  }
  run_traced numba_saxpy_sweep python3 "$wl/numba_saxpy_sweep.py"
  python3 "$wl/numba_saxpy_sweep.py" >"$logs/numba-untraced.out" 2>&1
  echo "untraced numba: $(tr '\n' ' ' <"$logs/numba-untraced.out")"
  run_traced compiled_model python3 "$wl/compiled_model.py"
  STEPS=6 WARMUP=2 run_traced resnet50 python3 "$wl/resnet50_step.py"
  ls -la "$traces"
  tar -C "$work" -czf "$out/kill.tgz" logs traces
else
  echo "== step-time benchmark"
  python3 "$root/bench/injector/gpu_bench.py" --lib "$lib" --launch-overhead "$stage/bin/launch_overhead" \
    --train "$wl/train_small.py" --resnet "$wl/resnet50_step.py" --skip-launch --achieved-sample \
    --bare-cupti "$stage/bin/libbare_cupti_injection.so" --rounds "${ROUNDS:-3}" --steps "${STEPS:-2000}" \
    --resnet-steps "${RESNET_STEPS:-150}" --warmup-s "${WARMUP_S:-15}" ${BENCH_ARGS:-} \
    --json "$logs/bench.json" 2>&1 | tee "$logs/bench.txt"
  tar -C "$work" -czf "$out/bench.tgz" logs
fi
