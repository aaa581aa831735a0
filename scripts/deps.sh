#!/usr/bin/env bash
# Installs the Debian packages terse needs, only those that are missing.
# Usage: scripts/deps.sh [build|test]  (test adds clang, sanitizer runtimes, bench baselines,
# and pkgconf and lnav for the package tests)
set -euo pipefail
packages=(cmake make g++ libfmt-dev libboost1.81-dev libzstd-dev libcli11-dev librdkafka-dev)
if [[ ${1:-build} == test ]]; then
  packages+=(catch2 clang clang-format-14 libclang-rt-14-dev libbenchmark-dev libspdlog-dev gnuplot-nox)
  # The Python reader's tests (tests/python): zstd, pytest, a venv for its pip install, pandas.
  packages+=(python3-zstandard python3-pytest python3-venv python3-setuptools python3-wheel python3-pandas)
  # The package's tests (tests/package): pkg-config for terse.pc, lnav for its format.
  packages+=(pkgconf lnav)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "missing Debian packages and not root: run as root or install them: ${missing[*]}" >&2
    exit 1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
