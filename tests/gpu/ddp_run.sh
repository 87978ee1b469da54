#!/usr/bin/env bash
# The multi-GPU checks (ddp_check.py) in one command, for a machine with >= 2 GPUs, from a staged
# tree (tests/gpu/stage.sh build gpu-stage):
#
#   STAGE=gpu-stage NPROC=2 tests/gpu/ddp_run.sh
#
# Writes $OUT/ddp.txt (the PASS/FAIL table, as it runs), $OUT/ddp.json and $OUT/ddp.tgz (the
# rank traces of every run, the summaries and the reports).
set -uo pipefail
name=ddp
source "$(dirname "$0")/stage_env.sh"
cp "$logs/env.txt" "$out/ddp.txt"
python3 "$root/tests/gpu/ddp_check.py" --occtrace "$stage/bin/occtrace" --lib "$stage/bin/libocctrace.so" \
  --occ-report "$stage/bin/occ-report" --workload "$root/tests/gpu/workloads/train_ddp.py" \
  --out "$work/ddp" --nproc "${NPROC:-2}" --json "$out/ddp.json" 2>&1 | tee -a "$out/ddp.txt"
rc=${PIPESTATUS[0]}
"$stage/bin/occ-report" "$work/ddp/launcher" >"$work/ddp/launcher-report.txt" 2>&1
"$stage/bin/occ-report" "$work/ddp/slow" >"$work/ddp/slow-report.txt" 2>&1
tar -C "$work" -czf "$out/ddp.tgz" ddp
exit "$rc"
