#!/usr/bin/env bash
# ctest achieved_features_gpu: edge cases under the achieved-only harness, then the features
# run again under the real libocctrace.so (its trace file checked). Exit 77 = skipped.
set -u
kernels=$1 harness=$2 library=$3
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "SKIPPED: no NVIDIA GPU (nvidia-smi -L failed)"; exit 77
fi
dir=$(mktemp -d)
CUDA_INJECTION64_PATH=$harness OCCTRACE_ACHIEVED=all OCC_HARNESS_CSV=$dir/features.csv \
  "$kernels" features || { echo "occ_kernels features failed"; exit 1; }
python3 "$(dirname "$0")/check_features.py" "$dir/features.csv" features || exit 1
CUDA_INJECTION64_PATH=$library OCCTRACE_ACHIEVED=all OCCTRACE_OUTPUT=$dir/features.db \
  "$kernels" features || { echo "occ_kernels features under libocctrace.so failed"; exit 1; }
python3 "$(dirname "$0")/check_features.py" "$dir/features.db" trace || exit 1
CUDA_INJECTION64_PATH=$harness OCCTRACE_ACHIEVED=sample OCCTRACE_ACHIEVED_IDLE=0.1 \
  OCCTRACE_SAMPLE_BUDGET=100% OCC_HARNESS_CSV=$dir/park.csv "$kernels" park \
  || { echo "occ_kernels park failed"; exit 1; }
python3 "$(dirname "$0")/check_features.py" "$dir/park.csv" park || exit 1
CUDA_INJECTION64_PATH=$library OCCTRACE_ACHIEVED=sample OCCTRACE_ACHIEVED_IDLE=0.1 \
  OCCTRACE_SAMPLE_BUDGET=100% OCCTRACE_OUTPUT=$dir/quiet.db \
  "$kernels" quiet || { echo "occ_kernels quiet under libocctrace.so failed"; exit 1; }
python3 "$(dirname "$0")/check_features.py" "$dir/quiet.db" quiet
