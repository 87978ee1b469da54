#!/usr/bin/env bash
# Fails when a function in analyzer/, reports/, sqlite/ or base/ runs over 80 lines: clang-tidy's
# readability-function-size, configured in .clang-tidy, over the compile commands of a build
# directory that has been built (the Protobuf headers are generated there).
#   scripts/function_size.sh [BUILD_DIR]     default build/
# analyzer/read/ is left out while its readers move to one folder per format (issue 40): four
# of its functions are still longer (ReadDevices, ScanNsys, AddKernel, LoadTorchProfiler).
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
# Sources: a Python regex (run-clang-tidy); headers: a POSIX one (clang-tidy).
sources="^$root/(analyzer/(?!read/)|reports/|sqlite/|base/)"
headers="^$root/(analyzer|reports|sqlite|base)/"
# The compile commands are GCC's: clang-tidy's clang does not know every warning flag.
"$runner" -quiet -p "$build" -clang-tidy-binary "$tidy" -j "$(nproc)" -header-filter "$headers" \
  -extra-arg=-Wno-unknown-warning-option "$sources"
