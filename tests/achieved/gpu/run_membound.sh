#!/usr/bin/env bash
# Memory-bound achieved occupancy against Nsight Compute (docs/accuracy.md):
#   run_membound.sh MEMBOUND_SWEEP LIBOCCTRACE [WORKDIR]
# Runs membound_sweep under occtrace (OCCTRACE_ACHIEVED=all) and under ncu with settings that
# differ in one thing at a time -- replay passes, cache control, clock control -- alternating
# the tools, then prints one table. It judges the two tools where the launches find the same
# cache state: the program evicts L2 itself before every saxpy, both tools run it with caches and
# clocks left alone, and ncu collects everything in one pass. (With warm caches ncu's own work
# between launches evicts part of L2 even with --cache-control none: its launches read more from
# DRAM, run longer and read higher occupancy; the table shows that difference, unjudged.)
# Exit 77 (skipped) without a GPU or ncu.
set -u
bin=$1 lib=$2 work=${3:-$(mktemp -d)}
mkdir -p "$work"
if ! nvidia-smi -L >/dev/null 2>&1; then echo "SKIPPED: no NVIDIA GPU (nvidia-smi -L failed)"; exit 77; fi
if ! command -v ncu >/dev/null; then echo "SKIPPED: ncu not on PATH"; exit 77; fi
here=$(cd "$(dirname "$0")" && pwd)
occ=sm__warps_active.avg.pct_of_peak_sustained_active
one_pass="$occ,gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed"
one_pass+=",lts__t_sectors.avg.pct_of_peak_sustained_elapsed,l1tex__t_sectors.avg.pct_of_peak_sustained_elapsed"
one_pass+=",sm__inst_issued.avg.pct_of_peak_sustained_active"
trace() {  # NAME [flush]
  rm -f "$work/$1.db"*
  CUDA_INJECTION64_PATH=$lib OCCTRACE_ACHIEVED=all OCCTRACE_QUIET=1 OCCTRACE_OUTPUT=$work/$1.db \
    timeout 120 "$bin" ${2:-} > "$work/$1.txt" 2>&1 || echo "run $1 failed: $(tail -n 3 "$work/$1.txt")"
}
profile() {  # NAME "ncu options" [flush]
  # shellcheck disable=SC2086
  timeout 300 ncu $2 --csv --print-units base -k regex:saxpy "$bin" ${3:-} > "$work/$1.csv" 2>&1 \
    || echo "ncu $1 failed: $(tail -n 3 "$work/$1.csv")"
}
# Same settings, tools alternated twice.
for rep in 1 2; do
  trace "occtrace$rep"
  profile "ncu1pass$rep" "--cache-control none --clock-control none --metrics $one_pass"
done
# One change at a time from there: ncu's default section set (several passes, device memory
# saved and restored between them), then ncu's defaults (cache flushed before each pass, clocks
# locked to base), then both tools on a program that evicts L2 itself before every saxpy.
profile ncu_sections "--cache-control none --clock-control none --section LaunchStats --section Occupancy --section SpeedOfLight --metrics $occ,gpu__time_duration.sum"
profile ncu_defaults "--section LaunchStats --section Occupancy --section SpeedOfLight --metrics $occ,gpu__time_duration.sum"
profile ncu_cache_all "--cache-control all --clock-control none --metrics $one_pass"
trace occtrace_flush flush
profile ncu1pass_flush "--cache-control none --clock-control none --metrics $one_pass" flush
args=()
for r in occtrace1 occtrace2 occtrace_flush; do args+=(--occtrace "$r=$work/$r.db"); done
for r in ncu1pass1 ncu1pass2 ncu_sections ncu_defaults ncu_cache_all ncu1pass_flush; do
  args+=(--ncu "$r=$work/$r.csv")
done
python3 "$here/membound_compare.py" "${args[@]}" --markdown "$work/membound.md" --judge occtrace_flush,ncu1pass_flush
