# cmake -P script: lnav, given the packaged format (lnav -i, into a scratch
# HOME), reads `terse cat -o json` output of a real log as terse_json
# records: each line's level, time, message, thread, file and line parsed
# into lnav's columns, compared with the JSON line itself.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
set(work ${PACKAGE_WORK_DIR}/lnav)
file(REMOVE_RECURSE ${work})
file(MAKE_DIRECTORY ${work}/home)
# lnav reads and writes its configuration under HOME (or XDG_CONFIG_HOME);
# TZ pins how it shows times.
set(lnav_env ${CMAKE_COMMAND} -E env HOME=${work}/home XDG_CONFIG_HOME=${work}/home/.config TZ=UTC)

# The program deb_test.cmake built against the package logs afresh.
run(${PACKAGE_WORK_DIR}/consumer/consumer ${work}/logs)
run(${TERSE_CLI_PATH} cat -o json ${work}/logs)
set(json_lines "${last_output}")
file(WRITE ${work}/records.json "${json_lines}")

# The queries go in script files: a leading ';' would be lost in a CMake
# list. lnav reports a failed query on stderr only, so the tests read what
# it printed.
file(WRITE ${work}/formats.lnav ";SELECT log_format FROM all_logs\n:write-json-to -\n")
file(WRITE ${work}/records.lnav
  ";SELECT log_time, log_level, log_body, thread, file, line FROM terse_json\n:write-json-to -\n")
run(${lnav_env} ${LNAV} -n -f ${work}/formats.lnav ${work}/records.json)
if(last_output MATCHES "terse_json")
  message(FATAL_ERROR "lnav took the records for terse_json before the format was installed:\n${last_output}")
endif()

run(${lnav_env} ${LNAV} -i ${TERSE_PREFIX}/${INSTALL_DATADIR}/terse/lnav/terse_json.json)
file(GLOB_RECURSE installed ${work}/home/*terse_json.json)
if(NOT installed)
  message(FATAL_ERROR "lnav -i installed no terse_json.json under the scratch HOME")
endif()

run(${lnav_env} ${LNAV} -n -f ${work}/records.lnav ${work}/records.json)
set(rows "${last_output}")

# One row of lnav's terse_json table per JSON line, in order.
string(REGEX REPLACE "\n$" "" json_lines "${json_lines}")
string(REPLACE "\n" ";" json_lines "${json_lines}")
list(LENGTH json_lines count)
string(JSON row_count ERROR_VARIABLE error LENGTH "${rows}")
if(error)
  message(FATAL_ERROR "lnav's output is not a JSON array: ${error}\n${rows}")
endif()
expect_equal("lnav rows for ${count} records" "${row_count}" "${count}")
if(count LESS 3)
  message(FATAL_ERROR "the log held only ${count} records")
endif()

set(i 0)
foreach(line ${json_lines})
  string(JSON row GET "${rows}" ${i})
  string(JSON level GET "${line}" level)
  # lnav's own name for terse's warn.
  if(level STREQUAL "warn")
    set(level warning)
  endif()
  string(JSON lnav_level GET "${row}" log_level)
  expect_equal("record ${i}: level" "${lnav_level}" "${level}")
  # lnav keeps the time as the line writes it, to the millisecond.
  string(JSON time GET "${line}" time)
  string(SUBSTRING "${time}" 0 10 day)
  string(SUBSTRING "${time}" 11 12 clock)
  string(JSON lnav_time GET "${row}" log_time)
  expect_equal("record ${i}: time of ${time}" "${lnav_time}" "${day} ${clock}")
  foreach(pair "message;log_body" "thread;thread" "file;file" "line;line")
    list(GET pair 0 key)
    list(GET pair 1 column)
    string(JSON value GET "${line}" ${key})
    string(JSON lnav_value GET "${row}" ${column})
    expect_equal("record ${i}: ${key}" "${lnav_value}" "${value}")
  endforeach()
  math(EXPR i "${i} + 1")
endforeach()
message(STATUS "lnav read ${count} records of terse cat -o json as terse_json, every field as written")
