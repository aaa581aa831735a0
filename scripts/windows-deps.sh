#!/usr/bin/env bash
# Stages what the Windows cross build (cmake/x86_64-w64-mingw32.cmake) links and includes, in
# build/deps/x86_64-w64-mingw32: zstd and libsodium built with MinGW-w64 from Debian's source
# packages of the host's libzstd-dev and libsodium-dev versions (Debian's patches applied), and
# the header-only dependencies (fmt, Boost, CLI11, Catch2) from the host's packages, each with a
# CMake package file of its own. The host's /usr/include cannot serve: it is glibc's. Run by
# scripts/deps.sh windows, which installs the packages first; does nothing when the staged
# libraries are the host's versions.
set -euo pipefail
cd "$(dirname "$0")/.."
prefix=$PWD/build/deps/x86_64-w64-mingw32
host_version() { dpkg-query -W -f='${Version}' "$1:$(dpkg --print-architecture)"; }
zstd_version=$(host_version libzstd-dev)
sodium_version=$(host_version libsodium-dev)
stamp=$prefix/staged-zstd-$zstd_version-sodium-$sodium_version
if [[ -e $stamp ]]; then exit 0; fi

rm -rf "$prefix"
mkdir -p "$prefix/include" "$prefix/lib/cmake"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Debian's source package, fetched through a source list of our own, so that the machine's
# apt configuration stays as it is.
sources=$work/sources.list
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
cat >"$sources" <<LIST
deb-src http://deb.debian.org/debian $codename main
deb-src http://deb.debian.org/debian $codename-updates main
LIST
mkdir -p "$work/lists/partial"
apt_options=(-o "Dir::Etc::SourceList=$sources" -o Dir::Etc::SourceParts=/dev/null -o "Dir::State::Lists=$work/lists")
# As root, apt fetches as its own unprivileged user, who cannot write into our temporary folder.
apt-get "${apt_options[@]}" -o APT::Sandbox::User=root -qq update
# Unpacks source package $1 at version $2 into $work/$3. A security update is not in these
# suites; the release's own version then serves (the library's API and format are those of the
# same upstream release).
unpack_source() {
  local package=$1 version=$2 dir=$3
  mkdir -p "$work/$dir.src"
  fetch() { (cd "$work/$dir.src" && apt-get "${apt_options[@]}" -o APT::Sandbox::User=root -qq source --download-only "$1"); }
  if ! fetch "$package=$version" 2>/dev/null; then
    rm -f "$work/$dir.src"/*
    fetch "$package"
    echo "$package $version's source is not on the mirror; built $(cd "$work/$dir.src" && ls ./*.dsc) instead"
  fi
  (cd "$work/$dir.src" && dpkg-source -q -x --no-check ./*.dsc "$work/$dir" >/dev/null)
}
unpack_source libzstd "$zstd_version" zstd
# The library only, single-threaded (the writer runs zstd on its own thread), without the
# legacy formats terse never reads.
make -C "$work/zstd/lib" -j"$(nproc)" libzstd.a CC=x86_64-w64-mingw32-gcc-posix AR=x86_64-w64-mingw32-ar \
  ZSTD_LEGACY_SUPPORT=0 >"$work/zstd.log" 2>&1 || { cat "$work/zstd.log"; exit 1; }
cp "$work/zstd/lib/libzstd.a" "$prefix/lib/"
cp "$work/zstd/lib/zstd.h" "$work/zstd/lib/zstd_errors.h" "$work/zstd/lib/zdict.h" "$prefix/include/"
mkdir -p "$prefix/lib/cmake/zstd"
cat >"$prefix/lib/cmake/zstd/zstdConfig.cmake" <<'CMAKE'
add_library(zstd::libzstd_static STATIC IMPORTED)
set_target_properties(zstd::libzstd_static PROPERTIES
  IMPORTED_LOCATION "${CMAKE_CURRENT_LIST_DIR}/../../libzstd.a"
  INTERFACE_INCLUDE_DIRECTORIES "${CMAKE_CURRENT_LIST_DIR}/../../../include")
CMAKE

# libsodium (sealed logs). Debian's source is upstream's git tree, without the generated
# configure script, and autotools are not among our build tools; the library needs none of what
# configure finds: without its HAVE_* definitions every primitive is built in portable C (the
# x86-64 assembly and the CPU-specific variants are left out), and on Windows its random bytes
# come from RtlGenRandom. Upstream's Windows project (builds/msvc) likewise compiles every C file
# without configure, with a ready-made version.h, which serves here too.
unpack_source libsodium "$sodium_version" sodium
sodium=$work/sodium/src/libsodium
cp "$work/sodium/builds/msvc/version.h" "$sodium/include/sodium/version.h"
mkdir -p "$work/sodium.o"
# TLS: the thread-local storage of its (unused) internal generator, spelled for GCC.
(cd "$sodium" && find . -name '*.c' -printf '%P\n') | sort | xargs -P"$(nproc)" -I{} sh -c \
  'x86_64-w64-mingw32-gcc-posix -O2 -DSODIUM_STATIC -DCONFIGURED=1 -DTLS=_Thread_local \
     -I"$1/include" -I"$1/include/sodium" -c "$1/$2" -o "$3/$(echo "$2" | tr / _).o"' \
  sh "$sodium" {} "$work/sodium.o" >"$work/sodium.log" 2>&1 || { cat "$work/sodium.log"; exit 1; }
x86_64-w64-mingw32-ar rcs "$prefix/lib/libsodium.a" "$work/sodium.o"/*.o
cp -r "$sodium/include/sodium.h" "$sodium/include/sodium" "$prefix/include/"
rm -rf "$prefix/include/sodium/private"

# Header-only packages: the host's headers, linked in, and a package file that makes the
# target the project links (its version file is the host package's own).
stage_headers() {
  local package=$1 target=$2 definitions=$3 version_file=$4
  shift 4
  local dir
  for dir in "$@"; do ln -s "/usr/include/$dir" "$prefix/include/$dir"; done
  mkdir -p "$prefix/lib/cmake/$package"
  cat >"$prefix/lib/cmake/$package/${package}Config.cmake" <<CMAKE
if(NOT TARGET $target)
  add_library($target INTERFACE IMPORTED)
  set_target_properties($target PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "\${CMAKE_CURRENT_LIST_DIR}/../../../include"
    INTERFACE_COMPILE_DEFINITIONS "$definitions")
endif()
CMAKE
  cp "$version_file" "$prefix/lib/cmake/$package/${package}ConfigVersion.cmake"
}
stage_headers fmt fmt::fmt-header-only FMT_HEADER_ONLY=1 /usr/lib/x86_64-linux-gnu/cmake/fmt/fmt-config-version.cmake fmt
stage_headers Catch2 Catch2::Catch2 "" /usr/lib/cmake/Catch2/Catch2ConfigVersion.cmake catch2
stage_headers CLI11 CLI11::CLI11 "" /usr/share/cmake/CLI11/CLI11ConfigVersion.cmake CLI
# Boost is found by CMake's own FindBoost, through its headers.
ln -s /usr/include/boost "$prefix/include/boost"
touch "$stamp"
echo "staged the Windows build's dependencies in $prefix"
