#!/usr/bin/env bash
# Configures and builds occtrace's tools (libocctrace.so, occtrace, occ-report) into build/,
# set-up included. Tests and benchmarks are scripts/test.sh's job. Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOCC_BUILD_TESTS=OFF -DOCC_BUILD_BENCH=OFF \
  "$@" >/dev/null
cmake --build build -j"$(nproc)"
