# Decodes FILE with the CLI (cat --utc ARGS) and fails unless its output is
# byte for byte EXPECTED. Run by ctest:
#   cmake -DCLI=... -DFILE=... -DEXPECTED=... -DARGS="-o;json" [-DEMULATOR=...] -P decode_same.cmake
# A cross build's CLI runs under EMULATOR (qemu, Wine).
execute_process(COMMAND ${EMULATOR} ${CLI} cat --utc ${ARGS} ${FILE}
                OUTPUT_VARIABLE actual ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "terse cat ${ARGS} ${FILE} exited with ${status}: ${errors}")
endif()
if(NOT errors STREQUAL "")
  message(FATAL_ERROR "terse cat ${ARGS} ${FILE} reported problems: ${errors}")
endif()
file(READ ${EXPECTED} expected)
if(NOT actual STREQUAL expected)
  get_filename_component(name ${EXPECTED} NAME)
  file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/${name}.actual "${actual}")
  message(FATAL_ERROR "terse cat ${ARGS} ${FILE} no longer prints ${EXPECTED} byte for byte; "
                      "what it printed is in ${CMAKE_CURRENT_BINARY_DIR}/${name}.actual (compare with diff)")
endif()
