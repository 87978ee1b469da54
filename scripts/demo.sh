#!/usr/bin/env bash
# The main job on a bundled example: builds occtrace, then runs occ-report.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
./build/analyzer/occ-report calc --gpu H100 --block 256 --regs 44
