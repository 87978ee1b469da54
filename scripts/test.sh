#!/usr/bin/env bash
# Builds and runs every test: the normal build (warnings as errors), an analyzer-only build
# without the CUDA toolkit, and the ASan+UBSan build. GPU tests skip with a reason on
# machines without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh --test
jobs="$(nproc)"
# ccache (setup.sh installs it): build-nocuda/ compiles the analyzer with build/'s flags, and the
# install test's wheel builds (tests/install/install_test.sh) compile what build/ and
# build-nocuda/ compiled, with the same flags, so all of those are cache hits on a fresh machine;
# reruns hit too. Paths are hashed relative to the checkout, so another clone hits as well.
export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

# Every ctest run adds to one closing line: "test.sh: N passed, N failed, N skipped".
passed=0; failed=0; skipped=0
run_ctest() {
  local log rc
  log="$(mktemp)"
  set +e
  ctest "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  set -e
  local total fails skips
  total="$(sed -n 's/.*tests failed out of \([0-9]*\).*/\1/p' "$log" | tail -n1)"
  fails="$(sed -n 's/.*, \([0-9]*\) tests failed out of.*/\1/p' "$log" | tail -n1)"
  skips="$(grep -c '(Skipped)$' "$log" || true)"
  rm -f "$log"
  total=${total:-0}; fails=${fails:-0}; skips=${skips:-0}
  passed=$((passed + total - fails - skips)); failed=$((failed + fails)); skipped=$((skipped + skips))
  if [[ $rc -ne 0 ]]; then
    echo "test.sh: $passed passed, $failed failed, $skipped skipped"
    exit "$rc"
  fi
}

echo "== build (warnings as errors)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOCC_WERROR=ON -DOCC_BUILD_TESTS=ON \
  -DOCC_BUILD_BENCH=ON -DOCC_BUILD_FUZZERS=ON >/dev/null
cmake --build build -j"$jobs"
run_ctest --test-dir build --output-on-failure -j"$jobs"

echo "== install: cmake --install (moved), CPack tarball and .deb, pip wheel into a venv"
tests/install/install_test.sh build

echo "== analyzer-only build (no CUDA toolkit visible)"
# build/'s build type and warning flags, so that its analyzer compiles are ccache hits.
cmake -S . -B build-nocuda -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOCC_WERROR=ON -DOCC_BUILD_BENCH=OFF \
  -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON -DOCC_USE_OCCUPANCY_ORACLE=OFF >/dev/null
cmake --build build-nocuda -j"$jobs"
run_ctest --test-dir build-nocuda --output-on-failure -j"$jobs"

echo "== install without CUDA: cmake --install (moved), the analyzer-only wheel into a venv"
tests/install/install_test.sh build-nocuda

echo "== ASan + UBSan build"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DOCC_SANITIZE=ON -DOCC_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
run_ctest --test-dir build-asan --output-on-failure -j"$jobs"
unset ASAN_OPTIONS UBSAN_OPTIONS

echo "== fuzz: trace reader under libFuzzer + ASan + UBSan (clang build, bounded run)"
# Its own build directory: libFuzzer needs clang, and the library under test is instrumented
# for coverage (fuzzer-no-link) only here.
cc=clang-14; cxx=clang++-14
command -v "$cxx" >/dev/null || { cc=clang; cxx=clang++; }
san="-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer"
CC="$cc" CXX="$cxx" cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DOCC_BUILD_FUZZERS=ON \
  -DOCC_BUILD_BENCH=OFF -DOCC_BUILD_INJECTOR=OFF "-DCMAKE_C_FLAGS=$san" "-DCMAKE_CXX_FLAGS=$san" >/dev/null
cmake --build build-fuzz -j"$jobs" --target occ_trace_reader_fuzzer occ_fuzz_seeds occ_torch_profiler_fuzzer
fuzz_dir="$(mktemp -d)"
trap 'rm -rf "$fuzz_dir"' EXIT
mkdir -p "$fuzz_dir/seeds" "$fuzz_dir/corpus"
build-fuzz/tests/fuzz/occ_fuzz_seeds "$fuzz_dir/seeds"
fuzzer="$PWD/build-fuzz/tests/fuzz/occ_trace_reader_fuzzer"
(cd "$fuzz_dir" && TMPDIR="$fuzz_dir" "$fuzzer" \
  corpus seeds -max_total_time=50 -max_len=65536 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
echo "== fuzz: torch.profiler JSON reader (bounded run)"
mkdir -p "$fuzz_dir/torch_seeds" "$fuzz_dir/torch_corpus"
cp tests/analysis/torch_profiler/handmade_rank0.json tests/fuzz/torch_seeds/* "$fuzz_dir/torch_seeds/"
(cd "$fuzz_dir" && TMPDIR="$fuzz_dir" "${fuzzer%/*}/occ_torch_profiler_fuzzer" \
  torch_corpus torch_seeds -max_total_time=30 -max_len=32768 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1)
echo "test.sh: $passed passed, $failed failed, $skipped skipped"
