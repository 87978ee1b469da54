#!/usr/bin/env bash
# Copies what tests/gpu/run.sh needs on a GPU machine into one folder to copy there:
#   tests/gpu/stage.sh BUILD_DIR DEST
# DEST gets bin/ (libocctrace.so, occtrace, launch_matrix, launch_overhead), lib/ (shared
# libraries of ours that a stock CUDA image may lack, e.g. libprotobuf), tests/gpu/ and
# bench/injector/ scripts and workloads, and examples/train_small_h100.sql (wheel_trace.sh's
# launch count to compare with).
set -euo pipefail
src="$(cd "$(dirname "$0")/../.." && pwd)"
build="$(cd "$1" && pwd)"
dest="$2"
rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib" "$dest/tests/gpu/workloads" "$dest/tests/achieved/gpu" \
  "$dest/bench/injector" "$dest/examples"
find_one() { find "$build" -name "$1" -type f -perm -u+x 2>/dev/null | head -n1; }
lib="$(find "$build" -name 'libocctrace.so' 2>/dev/null | head -n1)"
[[ -n "$lib" ]] || { echo "stage: libocctrace.so not found under $build" >&2; exit 1; }
cp -L "$lib" "$dest/bin/libocctrace.so"
for so in libbare_cupti_injection.so libocc_achieved_harness.so; do
  f="$(find "$build" -name "$so" 2>/dev/null | head -n1)"
  [[ -z "$f" ]] || cp -L "$f" "$dest/bin/"
done
for exe in occtrace occ-report launch_matrix launch_overhead cupti_client_probe occ_kernels \
    membound_sweep; do
  f="$(find_one "$exe")"
  if [[ -n "$f" ]]; then
    cp "$f" "$dest/bin/$exe"
  elif [[ "$exe" == launch_overhead ]] && command -v nvcc >/dev/null; then
    nvcc -O2 -arch=sm_90 -o "$dest/bin/$exe" "$src/bench/injector/launch_overhead.cu"
  else
    echo "stage: warning: $exe not built" >&2
  fi
done
# Non-system, non-CUDA dependencies travel along (the device image has glibc, libstdc++,
# libsqlite3 and CUDA; Debian's protobuf/abseil it may lack).
for f in "$dest"/bin/*; do
  ldd "$f" 2>/dev/null | awk '/=> \// {print $3}'
done | sort -u | grep -E 'libprotobuf|libabsl|libCLI11|libfmt' | while read -r so; do
  cp -L "$so" "$dest/lib/"
done || true
cp "$src"/tests/gpu/*.py "$src"/tests/gpu/*.sh "$src"/tests/gpu/*.cu "$dest/tests/gpu/"
mkdir -p "$dest/tests/gpu/advice" && cp "$src"/tests/gpu/advice/* "$dest/tests/gpu/advice/"
cp "$src"/tests/achieved/gpu/*.py "$src"/tests/achieved/gpu/*.sh "$src"/tests/achieved/gpu/*.cu "$dest/tests/achieved/gpu/"
cp "$src"/tests/gpu/workloads/*.py "$dest/tests/gpu/workloads/"
mkdir -p "$dest/tests/gpu/diag" && cp "$src"/tests/gpu/diag/*.c "$dest/tests/gpu/diag/"
cp "$src"/bench/injector/*.py "$src"/bench/injector/*.sh "$dest/bench/injector/"
cp "$src"/examples/train_small_h100.sql "$dest/examples/"
du -sh "$dest"
