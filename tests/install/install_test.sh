#!/usr/bin/env bash
# Installs occtrace every way a user can and runs the installed tools, each from a fresh place:
#   tests/install/install_test.sh BUILD_DIR
# BUILD_DIR is a configured and built tree (scripts/test.sh passes build/, with the injector,
# and build-nocuda/, the analyzer only). Each way is checked by check_tree below:
#   1. cmake --install BUILD_DIR --prefix P, then P moved elsewhere (relocatable);
#   2. the CPack tarball, unpacked into a fresh folder; the .deb, unpacked with dpkg-deb -x;
#   3. the wheel: `pip wheel .` (scikit-build-core from the package index, in a build venv),
#      installed with pip into a fresh venv. It is built in BUILD_DIR-wheel with BUILD_DIR's
#      build type, warning flags and CUDA setting, so with ccache (scripts/test.sh turns it on
#      when present) its compiles are cache hits of BUILD_DIR's. Skipped, with the reason, when
#      pip cannot reach the package index.
set -euo pipefail
cd "$(dirname "$0")/../.."
build="$(cd "$1" && pwd)"
start=$SECONDS
tmp="$(mktemp -d /tmp/occ-install.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
example=examples/train_small_h100.sql
has_injector=0
[[ -x "$build/injector/occtrace" ]] && has_injector=1
version="$(sed -n 's/^project(occtrace VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)"
# The report the build tree's occ-report gives: every installed occ-report must print the same.
expected="$tmp/expected.txt"
"$build/analyzer/occ-report" "$example" --top 10 >"$expected"

fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

# check_tree NAME BIN [ROOT]: BIN holds the installed commands; ROOT (the installed tree, when
# it has one) must hold the library occtrace points CUDA at, and the man pages.
check_tree() {
  local name="$1" bin="$2" root="${3:-}" got
  got="$tmp/$name.txt"
  "$bin/occ-report" "$example" --top 10 >"$got" || fail "$name: occ-report exited $?"
  cmp -s "$expected" "$got" || { diff "$expected" "$got" | head -20; fail "$name: occ-report's report differs from the build tree's"; }
  [[ "$("$bin/occ-report" --version)" == *"$version"* ]] || fail "$name: occ-report --version lacks $version"
  if ((has_injector)); then
    local library
    library="$("$bin/occtrace" -- sh -c 'echo "$CUDA_INJECTION64_PATH"')" || fail "$name: occtrace exited $?"
    [[ -f "$library" ]] || fail "$name: occtrace points CUDA at $library, which is missing"
    [[ -z "$root" || "$library" == "$root"/* ]] || fail "$name: occtrace uses $library, outside $root"
    "$bin/occtrace" --help | grep -q -- '--achieved' || fail "$name: occtrace --help"
  elif [[ -e "$bin/occtrace" ]]; then
    # The analyzer-only wheel still has the console script: it must say why it cannot trace.
    local out rc=0
    out="$("$bin/occtrace" -- true 2>&1)" || rc=$?
    [[ $rc -eq 2 && "$out" == *"without the CUDA toolkit"* ]] || fail "$name: an analyzer-only occtrace must say so (rc $rc: $out)"
  fi
  if [[ -n "$root" && -d "$root/share" ]]; then
    [[ -f "$root/share/doc/occtrace/docs/cli.md" ]] || fail "$name: share/doc/occtrace/docs/cli.md missing"
    if command -v help2man >/dev/null; then
      grep -q -- '--format' "$root/share/man/man1/occ-report.1" || fail "$name: occ-report.1 lacks --format"
    fi
  fi
  echo "install_test: $name: ok"
}

echo "== install: cmake --install, moved"
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
mv "$tmp/prefix" "$tmp/moved"
check_tree cmake-install "$tmp/moved/bin" "$tmp/moved"

if ((has_injector)); then
  echo "== install: CPack tarball and .deb"
  (cd "$build" && cpack -G "TGZ;DEB" -B "$tmp/packages" >/dev/null)
  tarball="$(ls "$tmp"/packages/occtrace-*.tar.gz)"
  mkdir "$tmp/unpacked"
  tar -xzf "$tarball" -C "$tmp/unpacked"
  top="$(ls -d "$tmp"/unpacked/occtrace-*)"
  check_tree tarball "$top/bin" "$top"
  deb="$(ls "$tmp"/packages/occtrace_*.deb)"
  depends="$(dpkg-deb -f "$deb" Depends)"
  [[ "$depends" == *libprotobuf* && "$depends" == *libsqlite3* ]] || fail ".deb Depends lacks protobuf or SQLite: $depends"
  dpkg-deb -x "$deb" "$tmp/deb"
  check_tree deb "$tmp/deb/usr/bin" "$tmp/deb/usr"
  echo "install_test: tarball $(du -k "$tarball" | cut -f1) KiB, .deb $(du -k "$deb" | cut -f1) KiB, Depends: $depends"
fi

echo "== install: pip wheel (scikit-build-core), into a fresh venv"
python3 -m venv "$tmp/build-venv"
if ! "$tmp/build-venv/bin/pip" install -q --disable-pip-version-check scikit-build-core >"$tmp/pip.log" 2>&1; then
  echo "install_test: SKIPPED the wheel: pip could not install scikit-build-core from the package index:"
  tail -n 2 "$tmp/pip.log"
else
  cached() { sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"; }
  # The same compilers as BUILD_DIR's, by the same path: ccache hashes the compiler, and pip's
  # build found g++ where CMake had found c++ (the same binary), which missed every compile.
  defines=(-Ccmake.build-type="$(cached CMAKE_BUILD_TYPE)" -Ccmake.define.OCC_WERROR="$(cached OCC_WERROR)"
           -Ccmake.define.CMAKE_CXX_COMPILER="$(cached CMAKE_CXX_COMPILER)"
           -Ccmake.define.CMAKE_C_COMPILER="$(cached CMAKE_C_COMPILER)")
  if [[ "$(cached CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit)" == ON ]]; then
    defines+=(-Ccmake.define.CMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
  fi
  wheel_start=$SECONDS
  CMAKE_GENERATOR="Unix Makefiles" "$tmp/build-venv/bin/pip" wheel . -q --no-deps --no-build-isolation \
    --disable-pip-version-check -w "$tmp/dist" -Cbuild-dir="$build-wheel" "${defines[@]}" \
    >"$tmp/wheel.log" 2>&1 || { tail -n 30 "$tmp/wheel.log"; fail "pip wheel"; }
  echo "install_test: pip wheel took $((SECONDS - wheel_start)) s"
  wheel="$(ls "$tmp"/dist/occtrace-*.whl)"
  python3 -m venv "$tmp/venv"
  "$tmp/venv/bin/pip" install -q --disable-pip-version-check --no-deps --no-index "$wheel"
  site="$("$tmp/venv/bin/python" -c 'import occtrace, os; print(os.path.dirname(occtrace.__file__))')"
  check_tree wheel "$tmp/venv/bin" "$site"
  echo "install_test: $(basename "$wheel") $(du -k "$wheel" | cut -f1) KiB"
fi
echo "install_test: $(basename "$build"): all ways installed and ran in $((SECONDS - start)) s"
