#!/usr/bin/env bash
# The launch zoo's counts (injection, LD_PRELOAD, launcher) and the kill tests (SIGTERM, SIGKILL)
# in every tracing mode, in one device call (issue #31: behaviour unchanged in every remaining
# mode):
#
#   STAGE=gpu-stage-NAME bash gpu-stage-NAME/tests/gpu/modes_checks.sh
#
# Modes: the default (PM sampling), replay (OCCTRACE_ACHIEVED=sample), off, light (PM sampling
# on), light with detach (no achieved occupancy). MODES="default off" runs some of them.
# $OUT/modes_checks.log (every mode's PASS/FAIL table) and modes_checks.json (per mode).
set -uo pipefail
name=modes
source "$(dirname "$0")/stage_env.sh"
log="$out/modes_checks.log"
cp "$logs/env.txt" "$log"
cases="${MODE_CASES:-kernels,sigterm,sigkill}"
check_mode() {  # LABEL ACHIEVED [VAR=VALUE...]
  local label=$1 achieved=$2; shift 2
  echo "== $label" | tee -a "$log"
  env "$@" timeout -k 5 "${MODE_TIMEOUT:-90}" python3 "$root/tests/gpu/gpu_checks.py" --achieved "$achieved" \
    --case "$cases" --lib "$lib" --launcher "$stage/bin/occtrace" --matrix "$stage/bin/launch_matrix" \
    --work "$work/$label" --workloads "$wl" --timeout 60 --json "$work/$label.json" >>"$log" 2>&1
  echo "$label: exit $? $(tail -1 "$log")"
}
modes=" ${MODES:-default replay off light light-detach} "
[[ $modes == *" default "* ]] && check_mode default default
[[ $modes == *" replay "* ]] && check_mode replay sample
[[ $modes == *" off "* ]] && check_mode off off
[[ $modes == *" light "* ]] && check_mode light default OCCTRACE_MODE=light
[[ $modes == *" light-detach "* ]] && check_mode light-detach default OCCTRACE_MODE=light OCCTRACE_LIGHT_DETACH=1
python3 - "$work" "$out/modes_checks.json" <<'PY'
import glob, json, os, sys
out = {os.path.basename(p)[:-5]: json.load(open(p)) for p in glob.glob(os.path.join(sys.argv[1], "*.json"))}
json.dump(out, open(sys.argv[2], "w"), indent=1)
PY
