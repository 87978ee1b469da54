#!/usr/bin/env bash
# PM sampling against Nsight Compute on one memory-bound kernel launched back to back and alone
# (workloads/back_to_back.py), docs/accuracy.md's open question: do PM's block-128 elementwise
# figures read 6-9 points above ncu because of how the launches ran in the program?
#   STAGE=gpu-stage-X OUT=DIR bash gpu-stage-X/tests/gpu/pm_sequence.sh
# $OUT/pm_sequence.txt: the traced run's output, occ-report's PM figures for the four
# configurations, ncu's, and pm_accuracy.py's comparison.
set -uo pipefail
name=pm_sequence
source "$(dirname "$0")/stage_env.sh"
log="$out/pm_sequence.txt"
cp "$logs/env.txt" "$log"
say "traced (default mode)" | tee -a "$log"
CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$work/seq.db" python3 "$wl/back_to_back.py" >>"$log" 2>&1
echo "exit $?" >>"$log"
"$stage/bin/occ-report" "$work/seq.db" --format json --top 0 >"$work/seq.json" 2>>"$log"
"$stage/bin/occ-report" "$work/seq.db" --top 0 >"$work/seq.txt" 2>>"$log"
grep -E "saxpy|Achieved|PM sampling" "$work/seq.txt" >>"$log"
say "ncu" | tee -a "$log"
ncu --csv --cache-control none --clock-control none --print-kernel-base mangled \
  --metrics sm__warps_active.avg.pct_of_peak_sustained_active,sm__cycles_active.sum \
  --kernel-name regex:saxpy python3 "$wl/back_to_back.py" >"$work/ncu.csv" 2>"$work/ncu.err"
echo "ncu exit $?" >>"$log"
python3 "$root/tests/gpu/pm_accuracy.py" accuracy "$work/seq.json" "$work/ncu.csv" >>"$log" 2>&1
say "done" | tee -a "$log"
