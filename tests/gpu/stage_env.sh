# Sourced by the GPU run scripts (light_and_cost.sh, lossless_and_cost.sh, ddp_run.sh) after
# setting `name`: the staged tree's paths, a work folder with logs/, the library search path, and
# env.txt (date, GPU, driver, clocks, torch and triton versions) in logs/, echoed.
#   stage  $STAGE or <repo>/gpu-stage     out   $OUT or ./gpu-out
#   work   a fresh /tmp/occ-$name.XXXXXX  logs  $work/logs
#   lib    the staged libocctrace.so      wl    tests/gpu/workloads
#   say    prints a section heading with the seconds since this file was sourced
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
stage="${STAGE:-$root/gpu-stage}"
out="${OUT:-$PWD/gpu-out}"
work="$(mktemp -d "/tmp/occ-${name:-gpu}.XXXXXX")"
logs="$work/logs"
mkdir -p "$logs" "$out"
export PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$stage/lib"
# libocctrace.so needs libcupti.so.13 on the search path for non-Python programs: PyTorch's
# wheel's copy, the one every PyTorch process has loaded anyway.
cupti="$(find / -xdev \( -path /proc -o -path /sys \) -prune -o -name 'libcupti.so.13*' -print 2>/dev/null | grep -m1 site-packages)"
[[ -n "$cupti" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$(dirname "$cupti")"
lib="$stage/bin/libocctrace.so"
wl="$root/tests/gpu/workloads"
{
  date -u; nvidia-smi --query-gpu=index,name,driver_version,clocks.sm,clocks.max.sm --format=csv
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"
} >"$logs/env.txt" 2>&1
cat "$logs/env.txt"
started=$SECONDS
say() { echo "== $* [$((SECONDS - started)) s]"; }
