#!/usr/bin/env bash
# Issue #29's GPU owner check over every framework, in one device call of under 6 minutes, from a
# staged tree (tests/gpu/stage.sh BUILD_DIR gpu-stage-NAME):
#
#   STAGE=gpu-stage-NAME bash gpu-stage-NAME/tests/gpu/owners_all.sh
#
# Traces short runs of each kind of program under occtrace (default settings, but achieved
# occupancy off, which owners do not need: ACHIEVED=pm|sample|all turns it on) and runs
# tests/gpu/check_owners.py on each trace: every function's owner in occ-report must be the
# library that holds its code (cuobjdump over the recorded loaders), or, for code compiled at run
# time, the compiler whose output folder holds it (--jit-dir: each program gets fresh ones), and
# every torch.compile kernel's recorded source nodes must be those Inductor's output code lists
# (--inductor-dir).
#   CUDA C++   launch_matrix, occ_kernels accuracy (the stage's binaries)
#   CuPy       cupy_sweep.py (RawKernels at several blocks + CuPy's own kernels, CuPy's kernel
#              cache), demo_train_sweep.py (CuPy RawKernels beside a PyTorch loop)
#   Numba      numba_block_sweep.py, numba_kernels.py (PTX dumped by NUMBA_DUMP_ASSEMBLY)
#   Triton     triton_autotune.py (@triton.autotune), triton_kernels.py (Triton's cache)
#   Inductor   compiled_model.py (torch.compile; Inductor's cache, source nodes), then again with
#              each kernel also compiled "another way" in the shared cache (inductor_shared_cache)
#   JAX        jax_mlp.py (jax.jit; XLA's dump folder, PTX included)
#   PyTorch    resnet18_train.py (cuDNN, cuBLAS/cuBLASLt, ATen)
# ONLY=label1,label2 picks programs; a program that would start after DEADLINE_S seconds (default
# 250) is skipped, programs and checks still running at FINISH_S (default 330) are stopped; all
# said in the log.
#
# $OUT gets owners_all.log (versions, one line per run and per check, every check's output, the
# source names found) and owners_all.tar (traces .db.xz, text reports, check outputs, program
# logs, Inductor's output code modules), split in 15 MiB parts if larger.
set -uo pipefail
name=owners
source "$(dirname "$0")/stage_env.sh"
[[ -d /usr/local/cuda/bin ]] && export PATH="$PATH:/usr/local/cuda/bin"  # cuobjdump for the checks
occtrace="$stage/bin/occtrace"
report="$stage/bin/occ-report"
log_file="$out/owners_all.log"
cp "$logs/env.txt" "$log_file"
log() { echo "$(date -u +%H:%M:%S) [$SECONDS s] $*" | tee -a "$log_file"; }
runs="$work/runs"
mkdir -p "$runs" "$work/numba_dump" "$work/cupy_cache" "$work/triton_cache" "$work/inductor" "$work/xla_dump"

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 "$root/tests/gpu/framework_versions.py" 2>&1
  echo "cuobjdump: $(command -v cuobjdump || echo missing)"
  echo "stage commit: $(cat "$stage/COMMIT" 2>/dev/null || echo unknown)"
} 2>&1 | tee -a "$log_file"

checks=()  # background check_owners pids
# program LABEL JITDIRS ENV... -- COMMAND...: COMMAND under occtrace into $runs/LABEL.db (stdout and
# stderr to LABEL.out/.err), its text report, then check_owners in the background with
# --jit-dir for each colon-separated folder of JITDIRS ("-": none).
program() {
  local label="$1" jit_dirs="$2"; shift 2
  local envs=()
  while [[ $# -gt 0 && "$1" != -- ]]; do envs+=("$1"); shift; done
  shift
  [[ -z "${ONLY:-}" || ",$ONLY," == *",$label,"* ]] || return 0
  if (( SECONDS > ${DEADLINE_S:-250} )); then log "$label skipped: past DEADLINE_S"; return 0; fi
  # No program runs past FINISH_S: the whole call stays under 6 minutes.
  local t0=$SECONDS rc limit="${LIMIT_S:-75}"
  (( limit <= ${FINISH_S:-330} - SECONDS )) || limit=$(( ${FINISH_S:-330} - SECONDS ))
  if (( limit < 10 )); then log "$label skipped: too close to FINISH_S"; return 0; fi
  timeout -k 10 "$limit" env "${envs[@]}" "$occtrace" -o "$runs/$label.db" --force --achieved "${ACHIEVED:-off}" -- "$@" \
    >"$runs/$label.out" 2>"$runs/$label.err"
  rc=$?
  log "$label rc=$rc $((SECONDS - t0))s: $(tail -n 1 "$runs/$label.out" | cut -c1-150)"
  [[ $rc == 0 ]] || tail -n 5 "$runs/$label.err" | sed 's/^/    /' | tee -a "$log_file"
  [[ -f "$runs/$label.db" ]] || { log "$label: no trace"; return 0; }
  "$report" "$runs/$label.db" --top 15 >"$runs/$label.report.txt" 2>&1 || log "$label: occ-report rc=$?"
  local args=()
  if [[ "$jit_dirs" != - ]]; then
    IFS=: read -ra dirs <<<"$jit_dirs"
    for d in "${dirs[@]}"; do args+=(--jit-dir "$d"); done
  fi
  [[ "$label" == inductor* ]] && args+=(--inductor-dir "$work/inductor")
  (
    timeout -k 5 150 python3 "$root/tests/gpu/check_owners.py" "$report" "$runs/$label.db" "${args[@]}" \
      >"$runs/$label.owners.txt" 2>&1
    rc=$?
    log "check_owners $label rc=$rc: $(grep '^check_owners: [0-9]* functions' "$runs/$label.owners.txt" | cut -c15-170)"
    [[ "$label" != inductor* ]] ||
      grep "^check_owners: [0-9]* torch.compile" "$runs/$label.owners.txt" | sed "s/^/    $label /" | tee -a "$log_file"
  ) &
  checks+=($!)
}

bin="$stage/bin"
if [[ -x "$bin/launch_matrix" ]]; then
  program cuda_launch_matrix - -- "$bin/launch_matrix" "$work/launch_matrix_expected.json"
else
  log "cuda_launch_matrix skipped: no $bin/launch_matrix in the stage"
fi
occ_kernels="$bin/occ_kernels"
[[ -x "$occ_kernels" ]] || occ_kernels="$stage/ach/occ_kernels"  # stage_all.sh puts it there
if [[ -x "$occ_kernels" ]]; then
  program cuda_occ_kernels - -- "$occ_kernels" accuracy
else
  log "cuda_occ_kernels skipped: no occ_kernels in the stage"
fi
program cupy_sweep "$work/cupy_cache" CUPY_CACHE_DIR="$work/cupy_cache" -- python3 "$wl/cupy_sweep.py"
program cupy_demo_train_sweep "$work/cupy_cache" CUPY_CACHE_DIR="$work/cupy_cache" STEPS=30 LAUNCHES=10 -- \
  python3 "$wl/demo_train_sweep.py"
# Numba compiles in memory: its PTX (NUMBA_DUMP_ASSEMBLY, in the program's output, linked into
# the numba_dump folder before the check starts) is what is searched.
ln -sf "$runs"/numba_{block_sweep,kernels}.{out,err} "$work/numba_dump/"
program numba_block_sweep "$work/numba_dump" NUMBA_DUMP_ASSEMBLY=1 -- python3 "$wl/numba_block_sweep.py"
program numba_kernels "$work/numba_dump" NUMBA_DUMP_ASSEMBLY=1 LAUNCHES=7 -- python3 "$wl/numba_kernels.py"
program triton_autotune "$work/triton_cache" TRITON_CACHE_DIR="$work/triton_cache" LAUNCHES=100 -- \
  python3 "$wl/triton_autotune.py"
program triton_kernels "$work/triton_cache" TRITON_CACHE_DIR="$work/triton_cache" LAUNCHES=5 -- \
  python3 "$wl/triton_kernels.py"
LIMIT_S=120 program inductor_compiled_model "$work/inductor/triton" TORCHINDUCTOR_CACHE_DIR="$work/inductor" STEPS=5 -- \
  python3 "$wl/compiled_model.py"
# The same program again over a cache shared with "another program": each Triton kernel of the
# first run also compiled a second way under the same name (a copy whose cubin differs). occtrace
# must follow the compilation whose cubin is the loaded module, so every kernel keeps its source.
if [[ -d "$work/inductor/triton" && ( -z "${ONLY:-}" || ",$ONLY," == *,inductor_shared_cache,* ) ]]; then
  find "$work/inductor/triton" -name 'triton_*.cubin' | while read -r cubin; do
    other="$(dirname "$cubin")_other"
    [[ -d "$other" ]] || cp -r "$(dirname "$cubin")" "$other"
    printf 'another program' >>"$other/$(basename "$cubin")"
  done
fi
LIMIT_S=90 program inductor_shared_cache "$work/inductor/triton" TORCHINDUCTOR_CACHE_DIR="$work/inductor" STEPS=3 -- \
  python3 "$wl/compiled_model.py"
program jax_mlp "$work/xla_dump" XLA_FLAGS="--xla_dump_to=$work/xla_dump" STEPS=100 -- python3 "$wl/jax_mlp.py"
program pytorch_resnet18 - STEPS=10 -- python3 "$wl/resnet18_train.py"

# The checks, then whatever is still running at FINISH_S is stopped (its output so far is kept).
for pid in "${checks[@]}"; do
  while kill -0 "$pid" 2>/dev/null && (( SECONDS < ${FINISH_S:-330} )); do sleep 1; done
  if kill -0 "$pid" 2>/dev/null; then
    log "a check (pid $pid) still running at FINISH_S: stopped"
    pkill -P "$pid" 2>/dev/null; kill "$pid" 2>/dev/null
  fi
done
wait 2>/dev/null

{
  echo
  echo "== torch.compile source names (occ-report's Source lines)"
  for r in "$runs"/inductor*.report.txt; do
    [[ -f "$r" ]] && awk '/^── #/ {title = $0} /^  Source / {print title; print; more = 1; next}
      more && /^               / {print; next} {more = 0}' "$r"
  done
  for f in "$runs"/*.owners.txt; do
    echo
    echo "== $(basename "$f")"
    cat "$f"
  done
} >>"$log_file"

# Inductor's output code modules (the ones that declare Triton kernels), for CPU goldens.
mkdir -p "$runs/inductor_output_code"
grep -rl --include='*.py' "async_compile.triton(" "$work/inductor" 2>/dev/null | grep -v "/triton/" |
  head -n 50 | while read -r f; do cp "$f" "$runs/inductor_output_code/"; done
for db in "$runs"/*.db; do [[ -f "$db" ]] && xz -T4 -6 "$db"; done
tar -C "$work" -cf "$out/owners_all.tar" runs logs
size=$(stat -c %s "$out/owners_all.tar")
if (( size >= 16000000 )); then  # parts under 16 MiB: file-size limits of result copying
  split -b 15M -d "$out/owners_all.tar" "$out/owners_all.tar.part" && rm "$out/owners_all.tar"
  log "owners_all.tar split in parts"
fi
log "done in ${SECONDS}s; $out: $(ls "$out" | tr '\n' ' ')"
