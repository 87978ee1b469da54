#!/usr/bin/env bash
# Builds and runs every test: the normal build (warnings as errors), an analyzer-only build
# without the CUDA toolkit, and the ASan+UBSan build. GPU tests skip with a reason on
# machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
jobs="$(nproc)"

echo "== build (warnings as errors)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOCC_WERROR=ON -DOCC_BUILD_FUZZERS=ON >/dev/null
cmake --build build -j"$jobs"
ctest --test-dir build --output-on-failure -j"$jobs"

echo "== analyzer-only build (no CUDA toolkit visible)"
cmake -S . -B build-nocuda -DCMAKE_BUILD_TYPE=Release -DOCC_WERROR=ON -DOCC_BUILD_BENCH=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DOCC_CUDA_OCCUPANCY_INCLUDE_DIR=NOTFOUND >/dev/null
cmake --build build-nocuda -j"$jobs"
ctest --test-dir build-nocuda --output-on-failure -j"$jobs"

echo "== ASan + UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DOCC_SANITIZE=ON -DOCC_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j"$jobs"
