#!/usr/bin/env bash
# Fails when a function in analyzer/, reports/, sqlite/ or base/ runs over 80 lines: clang-tidy's
# readability-function-size, configured in .clang-tidy, over the compile commands of a build
# directory that has been built (the Protobuf headers are generated there).
#   scripts/function_size.sh [BUILD_DIR]     default build/
# Not part of scripts/test.sh: on a 2-core machine it costs about 150 s of CPU (62 sources, each
# parsed with Protobuf's and CLI11's headers), over a minute of CI time.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build}"
root="$PWD"
if [[ ! -f "$build/compile_commands.json" ]]; then
  echo "function_size.sh: no $build/compile_commands.json: configure and build $build first" >&2
  exit 2
fi
runner="$(command -v run-clang-tidy-14 || command -v run-clang-tidy || true)"
tidy="$(command -v clang-tidy-14 || command -v clang-tidy || true)"
if [[ -z "$runner" || -z "$tidy" ]]; then
  echo "function_size.sh: clang-tidy not found (apt-get install clang-tidy)" >&2
  exit 2
fi
folders="^$root/(analyzer|reports|sqlite|base)/"
# The compile commands are GCC's: clang-tidy's clang does not know every warning flag.
"$runner" -quiet -p "$build" -clang-tidy-binary "$tidy" -j "$(nproc)" -header-filter "$folders" \
  -extra-arg=-Wno-unknown-warning-option "$folders"
