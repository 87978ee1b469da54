#!/usr/bin/env bash
# Diagnostics for the torch.profiler conflict (docs/tracing.md), in one run:
#   tests/gpu/diag/run_diag.sh LIBOCCTRACE WORKDIR
# 1. cupti_client_probe under occtrace: what CUPTI's per-thread last error keeps after a refusal.
# 2. torch.profiler inside a traced PyTorch program with every CUPTI call logged (which
#    library makes it, on which thread, with what result).
# 3. How torch's libraries reach CUPTI (PLT/GOT relocations vs dlsym).
set -uo pipefail
lib="$1"; work="$2"; mkdir -p "$work"
here="$(cd "$(dirname "$0")" && pwd)"
cuda="$(ls -d /usr/local/cuda* | head -1)"
cupti_dir="$(dirname "$(find /usr/local/cuda*/ -name 'libcupti.so.13' 2>/dev/null | head -1)")"
inc="-I$cuda/include -I$cuda/extras/CUPTI/include"
g++ -O1 -std=c++20 $inc "$here/../cupti_client_probe.cc" -o "$work/cupti_client_probe" -L"$cupti_dir" -lcupti \
  -L"$cuda/lib64/stubs" -lcuda -lpthread || echo "probe build failed"
gcc -O1 -shared -fPIC $inc "$here/cupti_call_log.c" -o "$work/libcupti_call_log.so" -ldl || echo "shim build failed"
echo "== 1. last-error probe (occtrace injected)"
LD_LIBRARY_PATH="$cupti_dir:${LD_LIBRARY_PATH:-}" CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$work/probe.db" \
  OCCTRACE_FORCE=1 timeout 60 "$work/cupti_client_probe" after 2>&1 | tail -12
echo "== 2. torch.profiler inside a traced program, CUPTI calls logged"
tp="$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null)"
cat > "$work/torchprof_small.py" <<'PY'
import torch
x = torch.randn(256, 256, device="cuda")
for _ in range(3):
    y = x @ x
torch.cuda.synchronize()
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    for _ in range(3):
        y = torch.relu(x @ x)
    torch.cuda.synchronize()
print("cuda events", len([e for e in prof.events() if e.device_type.name == "CUDA"]))
PY
# The same program with torch.profiler started before the first CUDA call.
cat > "$work/torchprof_first_small.py" <<'PY'
import torch
from torch.profiler import profile, ProfilerActivity
with profile(activities=[ProfilerActivity.CUDA]) as prof:
    x = torch.randn(256, 256, device="cuda")
    y = torch.relu(x @ x)
    torch.cuda.synchronize()
print("cuda events", len([e for e in prof.events() if e.device_type.name == "CUDA"]))
PY
for script in torchprof_small torchprof_first_small; do
  echo "-- $script"
  LD_PRELOAD="$work/libcupti_call_log.so" LD_LIBRARY_PATH="$cupti_dir:${LD_LIBRARY_PATH:-}" \
    CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$work/$script.logged.db" OCCTRACE_FORCE=1 OCCTRACE_ACHIEVED=off \
    timeout 120 python3 "$work/$script.py" 2>&1 | grep -v "cuptiEnableCallback" | head -60
done
echo "== 2c. both orders without the call log"
for script in torchprof_small torchprof_first_small; do
  rm -f "$work/$script.db"
  LD_LIBRARY_PATH="$cupti_dir:${LD_LIBRARY_PATH:-}" CUDA_INJECTION64_PATH="$lib" OCCTRACE_OUTPUT="$work/$script.db" \
    timeout 120 python3 "$work/$script.py" 2>&1 | grep -E "occtrace|cuda events|CUPTI" | cut -c1-300
done
echo "== 3. torch libraries referencing CUPTI"
for f in "$tp"/lib/*.so* $(python3 - <<'PY' 2>/dev/null
import glob, os, importlib.util
spec = importlib.util.find_spec("nvidia")
if spec and spec.submodule_search_locations:
    for d in spec.submodule_search_locations:
        for p in glob.glob(os.path.join(d, "**", "libcupti*.so*"), recursive=True):
            print(p)
PY
); do
  n=$(readelf -rW "$f" 2>/dev/null | grep -c "cuptiSubscribe")
  [ "$n" -gt 0 ] && { echo "$f:"; readelf -rW "$f" | grep -E "cuptiSubscribe|cuptiActivityRegisterCallbacks" | awk '{print "  ",$3,$5}'; }
  case "$f" in *libcupti*) echo "cupti copy: $f";; esac
done
readelf -dW "$tp/lib/libtorch_cuda.so" 2>/dev/null | grep -E "NEEDED.*cupti|FLAGS|BIND_NOW|RUNPATH"
echo "diag done"
