#!/usr/bin/env bash
# Configures and builds occtrace into build/ (set-up included). Extra args go to cmake.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build build -j"$(nproc)"
