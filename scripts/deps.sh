#!/usr/bin/env bash
# Installs the Debian packages terse needs, only those that are missing.
# Usage: scripts/deps.sh [build|test|aarch64|libcxx|windows]  (test adds clang, sanitizer
# runtimes, bench baselines, and pkgconf and lnav for the package tests; aarch64 adds the arm64
# cross compiler, qemu-user and the arm64 libraries, for scripts/test.sh aarch64; libcxx adds
# LLVM's libc++; windows adds MinGW-w64 and Wine, and cross-builds zstd and libsodium from
# Debian's source packages into build/deps/x86_64-w64-mingw32)
set -euo pipefail
group=${1:-build}
# libsodium: sealed logs (Config::encrypt_to, terse keygen, --key).
packages=(cmake make g++ libfmt-dev libboost1.81-dev libzstd-dev libcli11-dev librdkafka-dev libsodium-dev)
foreign_arch=
if [[ $group == aarch64 ]]; then
  # Libraries come as Debian multiarch :arm64 packages beside the host's (Multi-Arch: same, so
  # their versions must match the amd64 ones). Catch2 2 and CLI11 are header-only and
  # architecture-independent in use: the host's packages serve the cross build. Google
  # Benchmark and spdlog are for the call-site benchmark; librdkafka is left out (no
  # `terse ship` in this configuration).
  foreign_arch=arm64
  packages+=(catch2 g++-aarch64-linux-gnu qemu-user
    libfmt-dev:arm64 libzstd-dev:arm64 libsodium-dev:arm64 libboost1.81-dev:arm64 libbenchmark-dev:arm64 libspdlog-dev:arm64)
fi
if [[ $group == libcxx ]]; then
  packages+=(clang libc++-14-dev libc++abi-14-dev catch2)
fi
if [[ $group == windows ]]; then
  # Wine's 64-bit loader only: the tests are 64-bit programs. fmt, Boost, CLI11 and Catch2
  # are header-only for this build, staged from the host's packages.
  packages+=(g++-mingw-w64-x86-64-posix wine64 dpkg-dev xz-utils catch2)
fi
if [[ $group == test ]]; then
  packages+=(catch2 clang clang-format-14 libclang-rt-14-dev libbenchmark-dev libspdlog-dev gnuplot-nox)
  # The Python reader's tests (tests/python): zstd, pytest, a venv for its pip install, pandas.
  packages+=(python3-zstandard python3-pytest python3-venv python3-setuptools python3-wheel python3-pandas)
  # Sealed logs: the Python reader opens them with PyNaCl; the tests use ssh-keygen's keys.
  packages+=(python3-nacl openssh-client)
  # The package's tests (tests/package): pkg-config for terse.pc, lnav for its format.
  packages+=(pkgconf lnav)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# dpkg-query finds no :arm64 package until the architecture is added, so a fresh machine
# lists them all as missing.
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "missing Debian packages and not root: run as root or install them: ${missing[*]}" >&2
    exit 1
  fi
  if [[ -n $foreign_arch ]] && ! dpkg --print-foreign-architectures | grep -qx "$foreign_arch"; then
    dpkg --add-architecture "$foreign_arch"
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [[ $group == windows ]]; then
  exec "$(dirname "$0")/windows-deps.sh"
fi
