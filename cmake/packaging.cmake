# What a package of terse carries beyond the targets' own install rules
# (pkg-config files, shell completions, the lnav format), and the CPack
# settings for `cpack -G DEB`. Included once, after those install rules.

# ---- pkg-config ------------------------------------------------------------------
# The files compute their prefix from where they lie (${pcfiledir}), so an
# unpacked or moved tree works as well as /usr.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(TERSE_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
  set(TERSE_PC_LIBDIR "${CMAKE_INSTALL_LIBDIR}")
else()
  file(RELATIVE_PATH TERSE_PC_UP "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
  string(REGEX REPLACE "/$" "" TERSE_PC_UP "${TERSE_PC_UP}")
  set(TERSE_PC_PREFIX "\${pcfiledir}/${TERSE_PC_UP}")
  set(TERSE_PC_LIBDIR "\${prefix}/${CMAKE_INSTALL_LIBDIR}")
endif()
if(IS_ABSOLUTE "${CMAKE_INSTALL_INCLUDEDIR}")
  set(TERSE_PC_INCLUDEDIR "${CMAKE_INSTALL_INCLUDEDIR}")
else()
  set(TERSE_PC_INCLUDEDIR "\${prefix}/${CMAKE_INSTALL_INCLUDEDIR}")
endif()

# fmt is public (the headers include it, the macros call it); zstd is the
# library's own business, so a shared library hides it. A static archive
# cannot: its users link zstd themselves, and a plain `pkg-config --libs`
# (without --static) must say so. Boost.PFR is header-only and Debian ships
# no .pc for it; its headers are in the default include path.
# libsodium (sealed logs) is the same kind of private dependency as zstd.
set(TERSE_PC_SODIUM "")
if(TERSE_SODIUM)
  set(TERSE_PC_SODIUM ", libsodium")
endif()
function(terse_pkg_config_requires target out_requires out_private)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    set(${out_requires} "fmt >= 9, fmt < 10, libzstd${TERSE_PC_SODIUM}" PARENT_SCOPE)
    set(${out_private} "" PARENT_SCOPE)
  else()
    set(${out_requires} "fmt >= 9, fmt < 10" PARENT_SCOPE)
    set(${out_private} "libzstd${TERSE_PC_SODIUM}" PARENT_SCOPE)
  endif()
endfunction()

terse_pkg_config_requires(terse TERSE_PC_REQUIRES TERSE_PC_REQUIRES_PRIVATE)
configure_file(${PROJECT_SOURCE_DIR}/cmake/terse.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/terse.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/terse.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)

# The reader library, where this tree has one.
if(TARGET terse_reader)
  terse_pkg_config_requires(terse_reader TERSE_PC_REQUIRES TERSE_PC_REQUIRES_PRIVATE)
  configure_file(${PROJECT_SOURCE_DIR}/cmake/terse-reader.pc.in ${PROJECT_BINARY_DIR}/pkgconfig/terse-reader.pc @ONLY)
  install(FILES ${PROJECT_BINARY_DIR}/pkgconfig/terse-reader.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endif()

# ---- the CLI's companions ----------------------------------------------------------
if(TERSE_CLI)
  install(FILES ${PROJECT_SOURCE_DIR}/cli/completions/terse.bash
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME terse)
  install(FILES ${PROJECT_SOURCE_DIR}/cli/lnav/terse_json.json
    DESTINATION ${CMAKE_INSTALL_DATADIR}/terse/lnav)
endif()

# ---- CPack: cpack -G DEB in the build directory -------------------------------------
# Only for terse's own build: a project that adds terse as a subdirectory
# packages itself.
if(NOT TERSE_TOP_LEVEL)
  return()
endif()

# Debian's place for the licence of a package.
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE DESTINATION ${CMAKE_INSTALL_DOCDIR} RENAME copyright)

set(CPACK_PACKAGE_NAME terse)
set(CPACK_PACKAGE_VENDOR "the terse authors")
set(CPACK_PACKAGE_CONTACT "terse developers <dev@terse.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "low-latency binary logging library for C++20, and the terse log reader")
string(CONCAT CPACK_PACKAGE_DESCRIPTION
    "terse logs from C++20 programs at a cost of nanoseconds per call: call sites copy their raw "
    "arguments into per-thread buffers, and a background thread writes zstd-compressed, checksummed "
    "frames to rolling files. The package holds the library (headers, libterse, CMake and pkg-config "
    "files) and the terse command, which prints the files as text or JSON lines, follows, filters, "
    "verifies and summarises them, and ships them to Kafka; with its manual page, bash completion and "
    "an lnav format for its JSON lines.")
set(CPACK_RESOURCE_FILE_LICENSE ${PROJECT_SOURCE_DIR}/LICENSE)
set(CPACK_GENERATOR DEB)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # terse_VERSION_ARCH.deb, as dpkg names them
# The CLI without its debug information (50 MB of a RelWithDebInfo build);
# CMake strips executables and shared libraries only, so libterse.a keeps its
# symbols.
set(CPACK_STRIP_FILES TRUE)
set(CPACK_SOURCE_IGNORE_FILES "/build.*/" "/\\.git/")

# One package, for developers and operators alike: the CLI (and a shared
# libterse) needs the runtime libraries; the headers and the static library
# need what a program that includes and links them needs: fmt 9's and
# Boost.PFR's headers, zstd to link (and the CMake packages that terse's own
# finds). The names and versions are Debian 12's.
set(TERSE_DEB_DEPENDS
    "libc6"
    "libgcc-s1"
    "libstdc++6 (>= 12)"
    "libfmt9"
    "libzstd1"
    "libfmt-dev (>= 9)"
    "libfmt-dev (<< 10)"
    "libboost1.81-dev | libboost-dev (>= 1.75)"
    "libzstd-dev")
if(TERSE_SODIUM)
  list(APPEND TERSE_DEB_DEPENDS "libsodium23" "libsodium-dev")
endif()
if(TERSE_HAVE_KAFKA)
  list(APPEND TERSE_DEB_DEPENDS "librdkafka1")
endif()
list(JOIN TERSE_DEB_DEPENDS ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "bash-completion")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "lnav, pkgconf")
include(CPack)
