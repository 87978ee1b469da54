#!/usr/bin/env bash
# Achieved occupancy as a user first meets it, in one device call: each program
# traced once, from a cold process, in the default mode (nothing set but the output path), then
# occ-report's share of GPU time with an achieved figure, and the figures against Nsight Compute.
#   STAGE=gpu-stage-X bash gpu-stage-X/tests/gpu/coverage.sh
# Sections (SECTIONS, default "cov len ncu ivl"):
#   cov  coverage: train_small.py 300 steps; ResNet-50 10 steps; compiled_model.py with a cold
#        Inductor and Triton cache; jax_mlp.py; cupy_sweep.py; numba_block_sweep.py;
#        triton_autotune.py; streams4 (CUDA C++, 4 host threads on 4 streams); the bundled
#        example's program (demo_train_sweep.py)
#   len  ResNet-50 coverage against run length: 100 and 1,000 steps (10 is in cov)
#   ncu  Nsight Compute (--cache-control none --clock-control none) on train_small, cupy_sweep,
#        streams4 and numba_block_sweep, and their default-mode traces, for accuracy
#   ivl  the interval's choice: the coverage list again at each of INTERVALS (default "20 50")
#        us, and accuracy where ncu ran (run with ncu)
# Logs and reports: $OUT/coverage.tgz; the table: $OUT/coverage.md (also printed); the traces,
# xz-compressed, in up to 6 archives of at most 15 MB ($OUT/traces_N.tar), for offline analysis
# (the largest that do not fit are left out, and said so).
set -uo pipefail
name=coverage
source "$(dirname "$0")/stage_env.sh"
traces="$work/traces"; mkdir -p "$traces"
bin="$stage/bin"
report="$bin/occ-report"
pack() { cp "$work/coverage.md" "$out/" 2>/dev/null; tar -C "$work" -czf "$out/coverage.tgz" logs reports 2>/dev/null; }
trap pack EXIT
mkdir -p "$work/reports"
nvcc -O2 -arch=sm_90 -o "$work/streams4" "$root/tests/gpu/streams4.cu" >"$logs/nvcc.txt" 2>&1
sections=" ${SECTIONS:-cov len ncu ivl} "
want() { [[ "$sections" == *" $1 "* ]]; }
echo "| program | run | wall s | GPU time with achieved | configurations with a figure | OCC_META |" >"$work/coverage.md"
echo "| --- | --- | --- | --- | --- | --- |" >>"$work/coverage.md"

# trace LABEL TIMEOUT CMD...: one cold traced run in the default mode, then its coverage row.
trace() {
  local label=$1 limit=$2; shift 2
  local db="$traces/$label.db" t0 rc
  t0=$(date +%s.%N)
  env ${TRACE_ENV:-} OCCTRACE_OUTPUT="$db" CUDA_INJECTION64_PATH="$lib" timeout -k 5 "$limit" "$@" \
    >"$logs/$label.out" 2>"$logs/$label.err"
  rc=$?
  local wall; wall=$(python3 -c "print(round($(date +%s.%N) - $t0, 1))")
  say "$label: exit $rc, ${wall} s"
  grep occtrace: "$logs/$label.err" | head -3
  timeout 120 "$report" "$db" --format json --top 0 >"$work/reports/$label.json" 2>"$logs/$label.report.err"
  timeout 60 "$report" "$db" --top 15 >"$work/reports/$label.txt" 2>&1
  python3 "$root/tests/gpu/pm_accuracy.py" coverage-row "$work/reports/$label.json" "$db" \
    --label "$label" --wall-s "$wall" | tee -a "$work/coverage.md"
}

# accuracy NCU_LABEL REPORT_LABEL: the report's figures against ncu's.
accuracy() {
  [[ -f "$logs/ncu_$1.csv" && -f "$work/reports/$2.json" ]] || return 0
  python3 "$root/tests/gpu/pm_accuracy.py" accuracy "$work/reports/$2.json" "$logs/ncu_$1.csv" \
    --json "$work/reports/accuracy_$2.json" >"$logs/accuracy_$2.txt" 2>&1
  say "accuracy $2: exit $?"; tail -14 "$logs/accuracy_$2.txt"
}

# cov_list SUFFIX: the coverage list, each program once from a cold process (caches in their own
# folders per SUFFIX, so every compile is cold), labels LABEL$SUFFIX.
cov_list() {
  local sfx=$1
  trace "train_small_300$sfx" 120 env STEPS=300 python3 "$wl/train_small.py"
  trace "resnet50_10$sfx" 120 env STEPS=10 WARMUP=0 python3 "$wl/resnet50_step.py"
  trace "compiled_cold$sfx" 240 env TORCHINDUCTOR_CACHE_DIR="$work/inductor-c$sfx" \
    TRITON_CACHE_DIR="$work/triton-c$sfx" python3 "$wl/compiled_model.py"
  trace "jax_mlp$sfx" 120 env STEPS=300 python3 "$wl/jax_mlp.py"
  trace "cupy_sweep$sfx" 90 python3 "$wl/cupy_sweep.py"
  trace "numba_sweep$sfx" 90 python3 "$wl/numba_block_sweep.py"
  trace "triton_autotune$sfx" 120 env TRITON_CACHE_DIR="$work/triton-t$sfx" python3 "$wl/triton_autotune.py"
  trace "streams4$sfx" 90 "$work/streams4" 400
  trace "demo$sfx" 120 python3 "$wl/demo_train_sweep.py"
}
want cov && {
  say "coverage"
  cov_list ""
  pack
}
want len && {
  say "ResNet-50 run length"
  trace resnet50_100 150 env STEPS=100 WARMUP=0 python3 "$wl/resnet50_step.py"
  trace resnet50_1000 200 env STEPS=1000 WARMUP=0 python3 "$wl/resnet50_step.py"
  pack
}
want ncu && {
  say "Nsight Compute"
  metrics=sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.sum,gpu__time_duration.sum
  ncu_run() {  # LABEL LIMIT COUNT CMD...
    local label=$1 limit=$2 count=$3; shift 3
    timeout -k 5 "$limit" ncu --cache-control none --clock-control none --metrics "$metrics" \
      --csv --print-units base --print-kernel-base mangled -c "$count" "$@" \
      >"$logs/ncu_${label}.csv" 2>"$logs/ncu_${label}.err"
    say "ncu $label: exit $?, $(grep -c sm__warps_active "$logs/ncu_${label}.csv") rows"
  }
  ncu_run train_small 120 400 env STEPS=3 python3 "$wl/train_small.py"
  ncu_run cupy_sweep 90 400 python3 "$wl/cupy_sweep.py"
  ncu_run streams4 90 240 "$work/streams4" 20
  ncu_run numba_sweep 90 200 python3 "$wl/numba_block_sweep.py"
  for pair in train_small:train_small_300 cupy_sweep:cupy_sweep streams4:streams4 numba_sweep:numba_sweep; do
    accuracy "${pair%%:*}" "${pair#*:}"
  done
  pack
}
want ivl && {
  say "interval"
  for us in ${INTERVALS:-20 50}; do
    TRACE_ENV="OCCTRACE_PM_INTERVAL_US=$us" cov_list "_${us}us"
    for pair in train_small:train_small_300 cupy_sweep:cupy_sweep streams4:streams4 numba_sweep:numba_sweep; do
      accuracy "${pair%%:*}" "${pair#*:}_${us}us"
    done
    pack
  done
}
say "packing traces"
mkdir -p "$work/xz"
for db in "$traces"/*.db; do xz -T8 -6 -c "$db" >"$work/xz/$(basename "$db").xz"; done
python3 - "$work/xz" "$out" <<'PY'
import os, sys, tarfile
src, out = sys.argv[1], sys.argv[2]
files = sorted(os.listdir(src), key=lambda f: os.path.getsize(os.path.join(src, f)))
bins = []
for f in files:
    size = os.path.getsize(os.path.join(src, f))
    for b in bins:
        if b[0] + size <= 15 << 20:
            b[0] += size; b[1].append(f); break
    else:
        if len(bins) < 6 and size <= 15 << 20:
            bins.append([size, [f]])
        else:
            print(f"traces: left out {f} ({size >> 20} MB compressed)")
for i, (_, names) in enumerate(bins):
    with tarfile.open(os.path.join(out, f"traces_{i}.tar"), "w") as t:
        for n in names:
            t.add(os.path.join(src, n), arcname=n)
print(f"traces: {sum(len(b[1]) for b in bins)} in {len(bins)} archives")
PY
cat "$work/coverage.md"
