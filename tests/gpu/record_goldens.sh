#!/usr/bin/env bash
# Records the real traces that #29's and #30's CPU goldens are built from, in one GPU call, from
# a staged tree (tests/gpu/stage.sh build gpu-stage-NAME):
#
#   STAGE=gpu-stage-NAME tests/gpu/record_goldens.sh
#
# advice (#29): each workload under occtrace (default settings: full tracing, achieved occupancy
#   sampled): jax_mlp, resnet18_train, cupy_sweep, numba_block_sweep, triton_autotune,
#   demo_train_sweep. With ACHIEVED=pm, each is recorded a second time with OCCTRACE_ACHIEVED=pm
#   (NAME.pm.db), and train_small.py once more (train_small.pm.db, for the timeline's counter
#   track). If tests/gpu/check_owners.py exists, it runs on every advice trace (the owner check).
# torchprof (#30): torch.profiler Chrome traces (CPU + CUDA activity unless named cudaonly) of
#   train_small.py (export_chrome_trace; tensorboard_trace_handler; CUDA only; and one run under
#   occtrace too, both traces of the same launches), compiled_model.py (torch.compile, both
#   handlers) and a 2-rank DDP train_ddp.py (gloo, both ranks on GPU 0 unless there are 2 GPUs:
#   then NCCL, one GPU a rank), one trace per rank through tensorboard_trace_handler.
# PARTS=advice,torchprof picks parts (default both); ONLY=name1,name2 picks advice workloads;
# a run that would start after DEADLINE_S seconds (default 330) is skipped, said in the log.
#
# $OUT gets (at most 8 files, each under 16 MiB): progress.log (env, versions, one line per run,
# as it goes), advice.tar (NAME.db.xz, NAME.report.txt, NAME.out/.err), torchprof.tar (*.json.gz,
# tensorboard folders, logs), checks.log (owner checks, if any), logs.tgz (every log).
set -uo pipefail
name=goldens
source "$(dirname "$0")/stage_env.sh"
[[ -d /usr/local/cuda/bin ]] && export PATH="$PATH:/usr/local/cuda/bin"  # cuobjdump for checks
occtrace="$stage/bin/occtrace"
report="$stage/bin/occ-report"
parts="${PARTS:-advice,torchprof}"
progress="$out/progress.log"
cp "$logs/env.txt" "$progress"
log() { echo "$(date -u +%H:%M:%S) $*" | tee -a "$progress"; }

{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
  python3 "$root/tests/gpu/framework_versions.py" --torch-cuda 2>&1
  echo "cuobjdump: $(command -v cuobjdump || echo missing)"
  echo "libocctrace: $(ldd "$lib" | grep -E 'cupti|not found' | tr -s ' \t' ' ')"
  echo "stage commit: $(cat "$stage/COMMIT" 2>/dev/null || echo unknown)"
} 2>&1 | tee -a "$progress"

# run LABEL DIR TIMEOUT COMMAND...: stdout/stderr to DIR/LABEL.out/.err, one progress line.
run() {
  local label="$1" dir="$2" limit="$3"; shift 3
  local t0=$SECONDS rc
  if (( SECONDS > ${DEADLINE_S:-330} )); then log "$label skipped: past DEADLINE_S"; return 1; fi
  timeout -k 10 "$limit" "$@" >"$dir/$label.out" 2>"$dir/$label.err"
  rc=$?
  log "$label rc=$rc $((SECONDS - t0))s: $(tail -n 1 "$dir/$label.out" | cut -c1-160)"
  [[ $rc == 0 ]] || tail -n 5 "$dir/$label.err" | sed 's/^/    /' | tee -a "$progress"
  return $rc
}

advice="$work/advice"
mkdir -p "$advice"
# trace LABEL SCRIPT [ENV=VALUE...]: one workload under occtrace into $advice/LABEL.db, then its
# report (text) beside it.
trace() {
  local label="$1" script="$2"; shift 2
  run "$label" "$advice" 120 env "$@" "$occtrace" -o "$advice/$label.db" --force -- \
    python3 "$wl/$script"
  if [[ -f "$advice/$label.db" ]]; then
    "$report" "$advice/$label.db" --top 20 >"$advice/$label.report.txt" 2>&1 ||
      log "$label: occ-report rc=$?"
    python3 - "$advice/$label.db" <<'PYEOF' 2>&1 | sed "s/^/    $label meta: /" | tee -a "$progress"
import sqlite3, sys
con = sqlite3.connect(f"file:{sys.argv[1]}?mode=ro", uri=True)
rows = con.execute("SELECT name, value FROM OCC_META WHERE name LIKE 'module_loader%' OR name LIKE "
                   "'pm_%' OR name IN ('achieved_status', 'dropped_records')").fetchall()
launches = con.execute("SELECT count(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone()[0]
print(f"launches={launches}", " ".join(f"{k}={v}" for k, v in rows))
PYEOF
  fi
}

if [[ ",$parts," == *,advice,* ]]; then
  log "== advice (#29)"
  workloads="jax_mlp:jax_mlp.py resnet18_train:resnet18_train.py cupy_sweep:cupy_sweep.py
    numba_block_sweep:numba_block_sweep.py triton_autotune:triton_autotune.py
    demo_train_sweep:demo_train_sweep.py"
  for w in $workloads; do
    label="${w%%:*}"
    [[ -z "${ONLY:-}" || ",$ONLY," == *",$label,"* ]] || continue
    trace "$label" "${w#*:}"
    if [[ "${ACHIEVED:-}" == pm ]]; then
      trace "$label.pm" "${w#*:}" OCCTRACE_ACHIEVED=pm
    fi
  done
  [[ "${ACHIEVED:-}" == pm ]] && trace train_small.pm train_small.py OCCTRACE_ACHIEVED=pm STEPS=200
  # The owner checks (cuobjdump over the loaders) run on the CPU beside the torchprof part.
  (
    if [[ -f "$root/tests/gpu/check_owners.py" ]]; then
      for db in "$advice"/*.db; do
        (( SECONDS < ${DEADLINE_S:-330} + 60 )) || { log "check_owners $(basename "$db") skipped"; continue; }
        timeout -k 5 150 python3 "$root/tests/gpu/check_owners.py" "$report" "$db" \
          --jit-dir ~/.triton/cache --jit-dir ~/.cupy/kernel_cache >"${db%.db}.owners.txt" 2>&1
        log "check_owners $(basename "$db") rc=$?: $(tail -n 1 "${db%.db}.owners.txt" | cut -c1-160)"
        cat "${db%.db}.owners.txt" >>"$out/checks.log"
      done
    fi
    for db in "$advice"/*.db; do xz -T4 -6 "$db"; done
  ) &
  owners_pid=$!
fi

if [[ ",$parts," == *,torchprof,* ]]; then
  log "== torchprof (#30)"
  tp="$work/torchprof"
  mkdir -p "$tp"
  # Issue #30's three first (eager, torch.compile, 2-rank DDP), then the extras.
  run train_small_eager "$tp" 90 env TORCHPROF=1 STEPS=30 \
    TORCHPROF_TRACE="$tp/train_small_eager.json.gz" python3 "$wl/train_small.py"
  run compiled "$tp" 150 env TORCHPROF=1 STEPS=13 TORCHPROF_TB_DIR="$tp/compiled_tb" \
    TORCHPROF_WORKER=compiled TORCHPROF_TRACE="$tp/compiled.json.gz" python3 "$wl/compiled_model.py"
  gpus="$(nvidia-smi -L | grep -c '^GPU')"
  if [[ "$gpus" -ge 2 ]]; then backend=nccl; else backend=gloo; fi
  run "ddp_$backend" "$tp" 150 env BACKEND="$backend" TORCHPROF=1 STEPS=20 \
    TORCHPROF_TB_DIR="$tp/ddp_$backend" NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 \
    NVSHMEM_DISABLE_NVLS=1 torchrun --standalone --nproc_per_node=2 "$wl/train_ddp.py"
  run train_small_tb "$tp" 90 env TORCHPROF=1 STEPS=30 TORCHPROF_TB_DIR="$tp/train_small_tb" \
    TORCHPROF_WORKER=train_small python3 "$wl/train_small.py"
  # The same launches seen by both tools: occtrace's trace beside torch.profiler's.
  run train_small_both "$tp" 90 env TORCHPROF=1 STEPS=30 \
    TORCHPROF_TRACE="$tp/train_small_both.json.gz" \
    "$occtrace" -o "$tp/train_small_both.db" --force --achieved off -- python3 "$wl/train_small.py"
  [[ -f "$tp/train_small_both.db" ]] && xz -T4 -6 "$tp/train_small_both.db"
  run train_small_cudaonly "$tp" 90 env TORCHPROF=1 CUDAONLY=1 STEPS=30 \
    TORCHPROF_TRACE="$tp/train_small_cudaonly.json.gz" python3 "$wl/train_small.py"
  ls -laR "$tp" >>"$progress"
  tar -C "$work" -cf "$out/torchprof.tar" torchprof
  log "torchprof.tar $(du -h "$out/torchprof.tar" | cut -f1)"
fi

if [[ -n "${owners_pid:-}" ]]; then
  wait "$owners_pid"
  tar -C "$work" -cf "$out/advice.tar" advice
  log "advice.tar $(du -h "$out/advice.tar" | cut -f1)"
fi
for f in "$out"/*.tar; do  # parts under 16 MiB: file-size limits of result copying
  [[ -f "$f" ]] || continue
  [[ $(stat -c %s "$f") -lt 16000000 ]] || { split -b 15M -d "$f" "$f.part"; rm "$f"; log "split $f"; }
done
tar -C "$work" -czf "$out/logs.tgz" --exclude='*.xz' --exclude='*.json.gz' --exclude='*.db' .
log "done; $out: $(ls "$out" | tr '\n' ' ')"
