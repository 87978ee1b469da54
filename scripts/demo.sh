#!/usr/bin/env bash
# The main job on the bundled example: builds occtrace (installing missing Debian packages),
# then reports on a real trace recorded on an H100 running tests/gpu/workloads/train_small.py.
# Extra arguments go to occ-report (e.g. --format markdown, -o report.html, --top 5).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >&2
exec ./build/analyzer/occ-report examples/train_small_h100.sql --top 10 "$@"
