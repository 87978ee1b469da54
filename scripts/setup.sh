#!/usr/bin/env bash
# Installs the Debian packages occtrace needs, when missing (idempotent; needs root or sudo).
#   scripts/setup.sh          build dependencies
#   scripts/setup.sh --test   also test-only tools (clang for libFuzzer, chromium for the HTML test,
#                             cmark for the Markdown test, ccache: scripts/test.sh compiles most
#                             files in several build trees)
set -euo pipefail
# help2man: man pages from the tools' --help; dpkg-dev, file: CPack's .deb (dpkg-shlibdeps).
# libeigen3-dev: the least squares of PM attribution (analyzer/read/pm_rates.cc), header-only.
pkgs=(cmake make g++ pkg-config sqlite3 libsqlite3-dev libprotobuf-dev protobuf-compiler
      libcli11-dev libgtest-dev libgmock-dev rapidjson-dev libeigen3-dev zlib1g-dev help2man dpkg-dev file)
if [[ "${1:-}" == "--test" ]]; then
  # python3-venv: the install test's venvs. cmark: CommonMark's reference renderer, which
  # tests/reports/markdown_commonmark_test.cc renders the Markdown reports with.
  pkgs+=(clang libclang-rt-14-dev chromium cmark python3-venv ccache)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  exit 0
fi
echo "setup: installing ${missing[*]}" >&2
sudo_cmd=()
if [[ "$(id -u)" -ne 0 ]]; then sudo_cmd=(sudo); fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
