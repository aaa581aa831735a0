# cmake -P script: a plain program compiled as the README says,
#   g++ -std=c++20 prog.cpp $(pkg-config --cflags --libs terse)
# against the package that deb_test.cmake unpacked (PKG_CONFIG_PATH into
# it), then run; the packaged CLI decodes its log.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(work ${PACKAGE_WORK_DIR}/pkg-config)
file(REMOVE_RECURSE ${work})
file(MAKE_DIRECTORY ${work})

set(ENV{PKG_CONFIG_PATH} ${TERSE_PREFIX}/${INSTALL_LIBDIR}/pkgconfig)
run(${PKG_CONFIG} --modversion terse)
expect_equal("pkg-config --modversion terse" "${last_output}" "${TERSE_VERSION}\n")

# Relocatable: the prefix is where the tree was unpacked.
run(${PKG_CONFIG} --variable=prefix terse)
string(STRIP "${last_output}" prefix)
file(REAL_PATH ${prefix} prefix)
file(REAL_PATH ${TERSE_PREFIX} unpacked)
expect_equal("pkg-config --variable=prefix terse" "${prefix}" "${unpacked}")

# The reader library's file, where this tree builds that library: it names
# the library that lies in the package.
if(TERSE_HAVE_READER)
  run(${PKG_CONFIG} --libs-only-L --libs-only-l terse-reader)
  if(NOT last_output MATCHES "-L([^ ]+) -lterse_reader")
    message(FATAL_ERROR "pkg-config --libs terse-reader: '${last_output}' does not link terse_reader")
  endif()
  if(NOT EXISTS ${CMAKE_MATCH_1}/libterse_reader.a AND NOT EXISTS ${CMAKE_MATCH_1}/libterse_reader.so)
    message(FATAL_ERROR "pkg-config --libs terse-reader points at ${CMAKE_MATCH_1}, which has no libterse_reader")
  endif()
endif()

run(${PKG_CONFIG} --cflags --libs terse)
separate_arguments(flags UNIX_COMMAND "${last_output}")
run(${CXX_COMPILER} -std=c++20 ${PROGRAM_SOURCE} ${flags} -o ${work}/prog)
run(${work}/prog ${work}/logs)
expect_decoded(${work}/logs)
list(JOIN flags " " shown)
message(STATUS "built and ran: ${CXX_COMPILER} -std=c++20 prog.cpp ${shown}")
