#!/usr/bin/env bash
# Traced empty-kernel launches run either fast (~4.3 us) or slow (~6 us) per process on the
# test VMs. This shows, per round of each process, whether the CPU or the GPU set the pace (drain
# time after the launch loop) next to the GPU clock sampled every 100 ms.
#   bench/injector/launch_modes.sh STAGE [PROCESSES=4] [ROUNDS=12] [LAUNCHES=20000]   (logs in $OUT)
set -uo pipefail
stage="$(cd "$1" && pwd)"; procs="${2:-4}"; rounds="${3:-12}"; launches="${4:-20000}"
out="${OUT:-$PWD/modes-out}"; mkdir -p "$out"
cupti_dir="$(dirname "$(find /usr/local/cuda*/ -name 'libcupti.so.13' 2>/dev/null | head -1)")"
export LD_LIBRARY_PATH="$cupti_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,pstate --format=csv,noheader -lms 100 \
  >"$out/clocks.csv" 2>&1 &
smi=$!
db="$(mktemp -d)/t.db"
for ((p = 1; p <= procs; p++)); do
  for v in untraced bare-cupti traced; do
    env=(LAUNCH_OVERHEAD_VERBOSE=1)
    case "$v" in
      bare-cupti) env+=(CUDA_INJECTION64_PATH="$stage/bin/libbare_cupti_injection.so") ;;
      traced) env+=(CUDA_INJECTION64_PATH="$stage/bin/libocctrace.so" OCCTRACE_OUTPUT="$db" OCCTRACE_FORCE=1
                    OCCTRACE_QUIET=1 OCCTRACE_ACHIEVED=off) ;;
    esac
    echo "== $v process $p $(date -u +%T.%N | cut -c1-12)"
    env "${env[@]}" "$stage/bin/launch_overhead" "$launches" "$rounds" 2>&1
  done
done | tee "$out/modes.log"
kill "$smi" 2>/dev/null
