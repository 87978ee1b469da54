#!/usr/bin/env bash
# GPU check of the pip wheel as a PyTorch user installs it:
#   tests/gpu/wheel_trace.sh WHEEL        (in a checkout; writes wheel_trace.log into $OUT)
# 1. a venv beside PyTorch's (`python -m venv --system-site-packages`, from the Python that has
#    torch: $PYTHON, default python3), the wheel installed into it with nothing else;
# 2. train_small.py (STEPS=10, default tracing mode) traced with only what the wheel installed:
#    the venv's `occtrace` console script, LD_LIBRARY_PATH unset and PATH = the venv's bin +
#    /usr/bin:/bin, so the launcher alone finds libocctrace.so and the venv's libcupti.so.13;
# 3. the trace checked: launches recorded, the wheel's own `occ-report` reads it (text and
#    JSON), the traced process mapped libocctrace.so from the wheel and one libcupti.so.13
#    (which one is logged), and its launch count against the bundled example's (the same
#    workload traced by the build tree's library on an H100: examples/train_small_h100.sql).
# Exit status 1 if a check failed.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
wheel="$(realpath "$1")"
out="${OUT:-$PWD/wheel-out}"
mkdir -p "$out"
log="$out/wheel_trace.log"
py="${PYTHON:-python3}"
work="$(mktemp -d /tmp/occ-wheel.XXXXXX)"
failed=0
check() {  # check NAME CONDITION-EXIT-STATUS DETAIL
  if [[ "$2" == 0 ]]; then echo "PASS  $1: $3"; else echo "FAIL  $1: $3"; failed=1; fi
}
exec > >(tee "$log") 2>&1

echo "== $(date -u) $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -n1)"
echo "== wheel $(basename "$wheel")"
venv_py="$work/venv/bin/python"
pip_install=("$venv_py" -m pip install)
if ! "$py" -m venv --system-site-packages "$work/venv"; then
  # The base interpreter may lack ensurepip (a distribution Python without its venv package):
  # a venv without pip, installed into by the torch Python's pip (pip --python).
  rm -rf "$work/venv"
  "$py" -m venv --system-site-packages --without-pip "$work/venv" || { echo "FAIL  venv"; exit 1; }
  pip_install=("$py" -m pip --python "$venv_py" install)
  echo "== venv without pip (no ensurepip); installing with $py's pip"
fi
# A venv made from a venv (the image's torch lives in one) sees the base interpreter's
# site-packages, not torch's: a .pth file then adds torch's site-packages, which is what
# --system-site-packages gives a system-wide torch.
if ! "$venv_py" -c 'import torch' 2>/dev/null; then
  torch_site="$("$py" -c 'import os, torch; print(os.path.dirname(os.path.dirname(torch.__file__)))')"
  venv_site="$("$venv_py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  echo "$torch_site" >"$venv_site/torch-beside.pth"
  echo "== torch is in $torch_site (a venv): added to the new venv by $venv_site/torch-beside.pth"
fi
"${pip_install[@]}" --no-deps --no-index --disable-pip-version-check "$wheel" || { echo "FAIL  pip install"; exit 1; }
"$venv_py" -c 'import sys, torch; print("python", sys.version.split()[0], "torch", torch.__version__, "cuda", torch.version.cuda)'
"$venv_py" -c 'import occtrace, os; print("occtrace package:", os.path.dirname(occtrace.__file__))'

clean_env=(env -u LD_LIBRARY_PATH -u CUDA_INJECTION64_PATH "PATH=$work/venv/bin:/usr/bin:/bin")
echo "== what the launcher sets (a probe command)"
"${clean_env[@]}" occtrace -- sh -c 'echo "CUDA_INJECTION64_PATH=$CUDA_INJECTION64_PATH"; echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"'

echo "== trace train_small.py (STEPS=10) with the wheel's occtrace"
trace="$work/train.db"
# The traced process reports what it mapped at exit: which libcupti.so.13 and libocctrace.so.
cat >"$work/run_train.py" <<'EOF'
import atexit, runpy, sys
def maps():
    libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libcupti" in l or "libocctrace" in l})
    print("MAPPED", " ".join(libs), file=sys.stderr)
atexit.register(maps)
sys.argv = [sys.argv[1]]
sys.path.insert(0, __import__("os").path.dirname(sys.argv[0]))  # as `python train_small.py` has
runpy.run_path(sys.argv[0], run_name="__main__")
EOF
start=$SECONDS
(cd "$here/workloads" && "${clean_env[@]}" STEPS=10 occtrace -o "$trace" -- \
  python "$work/run_train.py" "$here/workloads/train_small.py" >"$work/train.out" 2>"$work/train.err")
rc=$?
cat "$work/train.out"; tail -n 5 "$work/train.err"
check "traced run" "$rc" "exit $rc in $((SECONDS - start)) s"
mapped="$(sed -n 's/^MAPPED //p' "$work/train.err")"
echo "mapped: $mapped"
[[ "$mapped" == *"$work/venv/"*"/occtrace/lib/occtrace/libocctrace.so"* ]]
check "libocctrace.so from the wheel" "$?" "$mapped"
n_cupti="$(tr ' ' '\n' <<<"$mapped" | grep -c 'libcupti.so.13')"
[[ "$n_cupti" == 1 ]]
check "one libcupti.so.13 in the process" "$?" "$(tr ' ' '\n' <<<"$mapped" | grep libcupti | tr '\n' ' ')"

example="$root/examples/train_small_h100.sql"
[[ -f "$example" ]] || { echo "FAIL  launch count: $example missing (tests/gpu/stage.sh copies it)"; failed=1; }
[[ -f "$example" ]] && "$venv_py" - "$trace" "$example" <<'EOF' || failed=1
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
meta = dict(con.execute("SELECT name, value FROM OCC_META"))
n = con.execute("SELECT COUNT(*) FROM OCC_LAUNCH").fetchone()[0]
kernels = con.execute("SELECT COUNT(DISTINCT configId) FROM OCC_LAUNCH").fetchone()[0]
print("trace: %d launches, %d configurations; cupti_version %s, achieved_status %s" %
      (n, kernels, meta.get("cupti_version"), meta.get("achieved_status")))
ex = sqlite3.connect(":memory:")
ex.executescript(open(sys.argv[2]).read())
m = ex.execute("SELECT COUNT(*) FROM OCC_LAUNCH").fetchone()[0]
print(("PASS" if n > 0 else "FAIL") + "  launches recorded: %d" % n)
# Same workload and steps; a different GPU or cuDNN may pick other kernels: within 5 %.
close = m and abs(n - m) <= 0.05 * m
print(("PASS" if close else "FAIL") +
      "  launch count %d against the bundled example's %d (H100, build-tree library)" % (n, m))
sys.exit(0 if n > 0 and close else 1)
EOF

echo "== the wheel's occ-report on the trace"
"${clean_env[@]}" occ-report "$trace" --top 5 >"$work/report.txt" 2>&1
rc=$?
head -n 40 "$work/report.txt"
check "occ-report (text)" "$rc" "exit $rc"
"${clean_env[@]}" occ-report "$trace" --format json -o "$work/report.json" 2>&1
rc=$?
check "occ-report (json)" "$rc" "exit $rc"
"$venv_py" -c 'import json, sys; r = json.load(open(sys.argv[1])); print("report keys:", sorted(r)[:12])' "$work/report.json"
"$venv_py" - "$trace" "$out/wheel_trace_train_small.sql" <<'EOF'
import sqlite3, sys
con = sqlite3.connect(sys.argv[1])
with open(sys.argv[2], "w") as f:
    for line in con.iterdump():
        f.write(line + "\n")
EOF
cp "$work/report.txt" "$work/train.err" "$out/" 2>/dev/null
rm -rf "$work"
echo "wheel_trace: $( ((failed)) && echo FAILED || echo all passed)"
exit "$failed"
