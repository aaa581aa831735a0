# The quick start as a test: the demo program logs from five threads into a fresh directory,
# and the CLI built beside it verifies and reads back every record, first and last in full.
# Cross builds run both under EMULATOR (Wine, qemu). Run by ctest:
#   cmake -DDEMO=... -DCLI=... -DDIR=... [-DEMULATOR=...] -P demo_logs.cmake
function(run)
  execute_process(COMMAND ${EMULATOR} ${ARGN} RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${ARGN} exited with ${status}: ${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${DIR})
run(${DEMO} ${DIR})
run(${CLI} verify ${DIR})
# 1 + 4 workers x (1000 debug + 10 info + 4 warn + 1 done) + the error and the critical.
if(NOT out MATCHES ": ok \\([0-9]+ frames, 4063 records\\)")
  message(FATAL_ERROR "terse verify did not find the demo's 4063 records intact: ${out}")
endif()
run(${CLI} cat --format "{level} {message}" ${DIR})
string(REGEX MATCHALL "[^\n]*\n" lines "${out}")
list(LENGTH lines count)
list(GET lines 0 first)
list(GET lines -1 last)
if(NOT count EQUAL 4063 OR NOT first STREQUAL "info demo starting with 4 worker threads\n"
   OR NOT last MATCHES "^critical pointer 0x[0-9a-f]+ and 0x[0-9a-f]+, unsigned 18446744073709551615 and -7\n$")
  message(FATAL_ERROR "terse cat printed ${count} lines, from '${first}' to '${last}'")
endif()
file(REMOVE_RECURSE ${DIR})
