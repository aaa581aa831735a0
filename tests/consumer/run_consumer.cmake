# cmake -P script: install, build the consumer, run it, read its log back
# with the installed bin/terse.
file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

run(${CMAKE_COMMAND} --install ${TERSE_BUILD_DIR} --prefix ${prefix})
foreach(expected include/terse/terse.hpp include/terse/schema.hpp include/terse/reader.hpp bin/terse)
  if(NOT EXISTS ${prefix}/${expected})
    message(FATAL_ERROR "install did not produce ${expected}")
  endif()
endforeach()

# The reader's header stands alone: standard headers only.
file(STRINGS ${prefix}/include/terse/reader.hpp includes REGEX "^#include")
foreach(line IN LISTS includes)
  if(NOT line MATCHES "^#include <[a-z_]+>$")
    message(FATAL_ERROR "include/terse/reader.hpp includes more than the standard library: ${line}")
  endif()
endforeach()

run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
    -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run(${WORK_DIR}/build/consumer ${WORK_DIR}/logs)
if(NOT last_output STREQUAL "read back 1 record\n")
  message(FATAL_ERROR "the consumer linking terse::terse and terse::reader said '${last_output}'")
endif()
run(${WORK_DIR}/build/reader_consumer ${WORK_DIR}/logs)
if(NOT last_output STREQUAL "info consumer says 42 and 2.50 (42)\n")
  message(FATAL_ERROR "the consumer of terse::reader read '${last_output}'")
endif()
run(${prefix}/bin/terse cat --format "{level} {message}" ${WORK_DIR}/logs)
set(expected "info consumer says 42 and 2.50\n")
if(NOT last_output STREQUAL expected)
  message(FATAL_ERROR "decoded output was '${last_output}', expected '${expected}'")
endif()
# A component terse does not have fails find_package.
execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/bad
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCONSUMER_COMPONENT=nosuch
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT "${out}${err}" MATCHES "no component 'nosuch'")
  message(FATAL_ERROR "find_package(terse COMPONENTS nosuch) did not fail as it should (${rc}):\n${out}\n${err}")
endif()
message(STATUS "downstream project built against the installed terse and its log decoded")
