# cmake -P script: cpack -G DEB in the build tree, dpkg -x the package into
# a scratch directory (nothing is installed on the system), check what it
# holds and declares, then build and run a downstream project against the
# unpacked tree with find_package(terse) and decode its log with the
# unpacked CLI.
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
file(REMOVE_RECURSE ${PACKAGE_WORK_DIR})

run(${CPACK_COMMAND} -G DEB --config ${TERSE_BUILD_DIR}/CPackConfig.cmake -B ${PACKAGE_WORK_DIR}/deb)
file(GLOB debs ${PACKAGE_WORK_DIR}/deb/*.deb)
list(LENGTH debs count)
expect_equal("packages cpack made" "${count}" "1")
get_filename_component(deb_name ${debs} NAME)
if(NOT deb_name MATCHES "^terse_${TERSE_VERSION}_[a-z0-9]+\\.deb$")
  message(FATAL_ERROR "package file '${deb_name}' is not named terse_${TERSE_VERSION}_ARCH.deb")
endif()

# ---- the control fields --------------------------------------------------------------
function(control_field field out)
  run(dpkg-deb --field ${debs} ${field})
  string(STRIP "${last_output}" value)
  set(${out} "${value}" PARENT_SCOPE)
endfunction()
control_field(Package package)
expect_equal("Package" "${package}" "terse")
control_field(Version version)
expect_equal("Version" "${version}" "${TERSE_VERSION}")
control_field(Maintainer maintainer)
if(NOT maintainer MATCHES "^[^<>]+ <[^<>@ ]+@[^<>@ ]+>$")
  message(FATAL_ERROR "Maintainer '${maintainer}' is not 'NAME <ADDRESS>'")
endif()
control_field(Depends depends)
set(needed libfmt9 libzstd1 libfmt-dev libzstd-dev)
if(TERSE_HAVE_KAFKA)
  list(APPEND needed librdkafka1)
endif()
foreach(name ${needed})
  if(NOT depends MATCHES "(^|, |\\| )${name}( |,|$)")
    message(FATAL_ERROR "Depends '${depends}' lacks ${name}")
  endif()
endforeach()
if(NOT TERSE_HAVE_KAFKA AND depends MATCHES "rdkafka")
  message(FATAL_ERROR "Depends '${depends}' names librdkafka, but this CLI was built without it")
endif()

# Every dependency names a real package that this machine, which built and
# tests the package, satisfies: one alternative of each group installed at a
# version that meets its bound.
string(REPLACE ", " ";" groups "${depends}")
foreach(group ${groups})
  string(REPLACE " | " ";" alternatives "${group}")
  set(satisfied OFF)
  foreach(alternative ${alternatives})
    if(NOT alternative MATCHES "^([a-z0-9.+-]+)( \\((<<|<=|=|>=|>>) ([^)]+)\\))?$")
      message(FATAL_ERROR "dependency '${alternative}' is not 'NAME [(OP VERSION)]'")
    endif()
    set(name ${CMAKE_MATCH_1})
    set(op "${CMAKE_MATCH_3}")
    set(bound "${CMAKE_MATCH_4}")
    execute_process(COMMAND dpkg-query --show "--showformat=\${db:Status-Status} \${Version}" ${name}
      RESULT_VARIABLE rc OUTPUT_VARIABLE status ERROR_QUIET)
    if(NOT rc EQUAL 0 OR NOT status MATCHES "^installed (.+)$")
      continue()
    endif()
    set(installed ${CMAKE_MATCH_1})
    if(op)
      string(REPLACE "<<" "lt" op "${op}")
      string(REPLACE ">>" "gt" op "${op}")
      string(REPLACE "<=" "le" op "${op}")
      string(REPLACE ">=" "ge" op "${op}")
      string(REPLACE "=" "eq" op "${op}")
      execute_process(COMMAND dpkg --compare-versions ${installed} ${op} ${bound} RESULT_VARIABLE rc)
      if(NOT rc EQUAL 0)
        continue()
      endif()
    endif()
    set(satisfied ON)
  endforeach()
  if(NOT satisfied)
    message(FATAL_ERROR "dependency '${group}' is met by no package installed here")
  endif()
endforeach()

# ---- the files ------------------------------------------------------------------------
run(dpkg -x ${debs} ${PACKAGE_ROOT})
set(expected_files
  ${INSTALL_BINDIR}/terse
  ${INSTALL_MANDIR}/man1/terse.1
  ${INSTALL_DOCDIR}/copyright
  ${INSTALL_DATADIR}/bash-completion/completions/terse
  ${INSTALL_DATADIR}/terse/lnav/terse_json.json
  ${INSTALL_INCLUDEDIR}/terse/terse.hpp
  ${INSTALL_INCLUDEDIR}/terse/schema.hpp
  ${INSTALL_LIBDIR}/${TERSE_LIBRARY_FILE}
  ${INSTALL_LIBDIR}/cmake/terse/terseConfig.cmake
  ${INSTALL_LIBDIR}/cmake/terse/terseConfigVersion.cmake
  ${INSTALL_LIBDIR}/cmake/terse/terseTargets.cmake
  ${INSTALL_LIBDIR}/pkgconfig/terse.pc)
if(TERSE_HAVE_READER)
  list(APPEND expected_files ${INSTALL_LIBDIR}/pkgconfig/terse-reader.pc)
endif()
foreach(file ${expected_files})
  if(NOT EXISTS ${TERSE_PREFIX}/${file})
    message(FATAL_ERROR "the package lacks /usr/${file}")
  endif()
endforeach()

run(${TERSE_CLI_PATH} --version)
expect_equal("terse --version" "${last_output}" "terse ${TERSE_VERSION}\n")
run(${TERSE_CLI_PATH} --help)
foreach(command cat verify stats ship)
  if(NOT last_output MATCHES "\n  ${command} ")
    message(FATAL_ERROR "terse --help lists no '${command}' command:\n${last_output}")
  endif()
endforeach()

file(STRINGS ${TERSE_PREFIX}/${INSTALL_MANDIR}/man1/terse.1 man_title LIMIT_COUNT 1)
if(NOT man_title MATCHES "^\\.TH TERSE 1 ")
  message(FATAL_ERROR "terse.1 does not start as a section 1 manual page: '${man_title}'")
endif()

run(bash -c "source \"$1\" && complete -p terse" bash ${TERSE_PREFIX}/${INSTALL_DATADIR}/bash-completion/completions/terse)
expect_equal("the packaged bash completion" "${last_output}" "complete -F _terse terse\n")

file(READ ${TERSE_PREFIX}/${INSTALL_DATADIR}/terse/lnav/terse_json.json lnav_format)
string(JSON lnav_json ERROR_VARIABLE json_error GET "${lnav_format}" terse_json json)
if(json_error OR NOT lnav_json)
  message(FATAL_ERROR "the packaged lnav format defines no JSON format terse_json: ${json_error}")
endif()

# Relocatable: nothing installed names the build machine's folders.
file(GLOB_RECURSE text_files ${TERSE_PREFIX}/${INSTALL_LIBDIR}/cmake/*.cmake ${TERSE_PREFIX}/${INSTALL_LIBDIR}/pkgconfig/*.pc)
foreach(file ${text_files})
  file(READ ${file} text)
  foreach(folder ${TERSE_BUILD_DIR} ${TERSE_SOURCE_DIR})
    string(FIND "${text}" "${folder}" at)
    if(NOT at EQUAL -1)
      message(FATAL_ERROR "${file} names the build machine's ${folder}")
    endif()
  endforeach()
endforeach()

# ---- a downstream project against the unpacked tree ---------------------------------
run(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${PACKAGE_WORK_DIR}/consumer -DCMAKE_PREFIX_PATH=${TERSE_PREFIX}
    -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
file(STRINGS ${PACKAGE_WORK_DIR}/consumer/CMakeCache.txt terse_dir REGEX "^terse_DIR:")
file(REAL_PATH ${TERSE_PREFIX}/${INSTALL_LIBDIR}/cmake/terse unpacked_config)
if(NOT terse_dir MATCHES "=(.*)$")
  message(FATAL_ERROR "the consumer's cache has no terse_DIR")
endif()
file(REAL_PATH ${CMAKE_MATCH_1} found_config)
expect_equal("the terse package the consumer found" "${found_config}" "${unpacked_config}")
run(${CMAKE_COMMAND} --build ${PACKAGE_WORK_DIR}/consumer)
run(${PACKAGE_WORK_DIR}/consumer/consumer ${PACKAGE_WORK_DIR}/consumer-logs)
expect_decoded(${PACKAGE_WORK_DIR}/consumer-logs)
message(STATUS "${deb_name}: control fields, files and a find_package consumer checked")
