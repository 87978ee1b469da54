#!/usr/bin/env bash
# Stages everything tests/gpu/validate_all.sh needs into one folder to copy to the GPU machine:
#   tests/gpu/stage_all.sh BUILD_DIR DEST
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "$1" && pwd)"
dest="$2"
bash "$src/tests/gpu/stage.sh" "$build" "$dest"
mkdir -p "$dest/ach"
cp "$(find "$build" -name occ_kernels -type f | head -n1)" "$dest/ach/"
cp "$(find "$build" -name 'libocc_achieved_harness.so' | head -n1)" "$dest/ach/"
cp "$src"/tests/achieved/gpu/{compare_ncu.py,occtrace_csv.py,run_features.sh,check_features.py,tailwave.py} "$dest/ach/"
cp "$src/tests/gpu/validate_all.sh" "$dest/tests/gpu/"
mkdir -p "$dest/tests/injector/gpu_check"
cp "$src"/tests/injector/gpu_check/* "$dest/tests/injector/gpu_check/"
du -sh "$dest"
