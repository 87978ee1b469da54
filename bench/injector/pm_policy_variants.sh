#!/usr/bin/env bash
# PM sampling policy variants against each other on tests/gpu/coverage.sh's coverage list, each
# program once from a cold process per round, rounds interleaved so that drift and cold-start
# luck fall on every variant alike:
#   STAGE=gpu-stage-X ROUNDS="0 A B" bash gpu-stage-X/bench/injector/pm_policy_variants.sh
# A variant V is $STAGE/bin/libocctrace-V.so (built from the same tree with other policy
# constants; what each is, the results' README says). Each round copies it over
# bin/libocctrace.so (left as the last one) and runs coverage.sh (SECTIONS=cov). SAFE="V ..." then runs the exit-safety
# and kill checks (tests/gpu/pm_measure.sh SECTIONS="6 0") with each of those variants.
# Out: $OUT/round_N_V.tgz (coverage.md, reports, traces) and $OUT/safe_V.tgz.
set -uo pipefail
stage="$(cd "${STAGE:?STAGE=the staged folder}" && pwd)"
out="${OUT:-$PWD/gpu-out}"
mkdir -p "$out"
n=0
for v in ${ROUNDS:-}; do
  n=$((n + 1))
  lib="$stage/bin/libocctrace-$v.so"
  [[ -f "$lib" ]] || { echo "pm_policy_variants: no $lib" >&2; continue; }
  cp "$lib" "$stage/bin/libocctrace.so"
  dir="$(mktemp -d /tmp/variant.XXXXXX)"
  echo "== round $n: variant $v ($(date -u +%T))"
  OUT="$dir" SECTIONS=cov STAGE="$stage" bash "$stage/tests/gpu/coverage.sh" >"$dir/console.txt" 2>&1
  grep -E '^\| [a-z]' "$dir/coverage.md" | cut -d'|' -f2,5,6 | sed "s/^/$v /"
  tar -C "$dir" -czf "$out/round_${n}_$v.tgz" .
done
for v in ${SAFE:-}; do
  cp "$stage/bin/libocctrace-$v.so" "$stage/bin/libocctrace.so"
  dir="$(mktemp -d /tmp/safe.XXXXXX)"
  echo "== safety: variant $v ($(date -u +%T))"
  OUT="$dir" SECTIONS="6 0" SAFE_REPEATS=1 KILL_AFTER=2,5 STAGE="$stage" \
    bash "$stage/tests/gpu/pm_measure.sh" >"$dir/console.txt" 2>&1
  grep -hE 'exit=|PASS|FAIL|kill_test' "$dir/console.txt" | tail -20
  tar -C "$dir" -czf "$out/safe_$v.tgz" .
done
