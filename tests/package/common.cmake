# What the package tests share (cmake -P scripts). The unpacked package lies
# under PACKAGE_ROOT (dpkg -x of the .deb); TERSE_PREFIX is its /usr.
set(PACKAGE_ROOT ${PACKAGE_WORK_DIR}/root)
set(TERSE_PREFIX ${PACKAGE_ROOT}/usr)
set(TERSE_CLI_PATH ${TERSE_PREFIX}/${INSTALL_BINDIR}/terse)

# run(COMMAND...): runs it, fails the test with its output unless it exits 0;
# its stdout is in last_output.
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    string(REPLACE ";" " " command "${ARGN}")
    message(FATAL_ERROR "failed (${rc}): ${command}\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

function(expect_equal what actual expected)
  if(NOT actual STREQUAL expected)
    message(FATAL_ERROR "${what}: got '${actual}', expected '${expected}'")
  endif()
endfunction()

# What the packaged CLI prints of the records tests/package/project logs:
# info and up (the default level), the context where it was open.
set(EXPECTED_DECODED "info started with 4 workers \nwarn queue depth 130 over limit 100 request_id=42\n\
error connect to db.internal failed after 2.5 s request_id=42\n")
function(expect_decoded logs_dir)
  run(${TERSE_CLI_PATH} cat --format "{level} {message} {context}" ${logs_dir})
  expect_equal("records decoded by the packaged terse from ${logs_dir}" "${last_output}" "${EXPECTED_DECODED}")
endfunction()
