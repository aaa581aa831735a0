# The golden file that pins format version 1: a test that decodes it and one
# that walks its bytes by the spec alone (schema/FORMAT.md), plus the program
# that wrote it, kept buildable so the file can be regenerated on purpose.
terse_add_test(golden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/golden_test.cpp LABELS "decoder;format")
target_compile_definitions(golden_test PRIVATE TERSE_TEST_DATA="${TERSE_TEST_DATA}")
# The spec walker decompresses records frames itself, without the decoder.
target_link_libraries(golden_test PRIVATE ${TERSE_ZSTD})

# Built so it never rots, but never run by ctest: running it writes a new file.
add_executable(terse_make_golden ${TERSE_TEST_DATA}/make_golden.cpp)
target_link_libraries(terse_make_golden PRIVATE terse::terse)

# The file written by the runtime before the code was restructured: its text
# and JSON through the CLI must stay byte for byte what they were.
add_executable(terse_make_golden_v1_1 ${TERSE_TEST_DATA}/make_golden_v1_1.cpp)
target_link_libraries(terse_make_golden_v1_1 PRIVATE terse::terse)
# Format 1.3: numbered frames and cut strings with their original length.
add_executable(terse_make_golden_v1_3 ${TERSE_TEST_DATA}/make_golden_v1_3.cpp)
target_link_libraries(terse_make_golden_v1_3 PRIVATE terse::terse)
# Format 1.4: rate-limited sites, their suppressed counts and reports.
add_executable(terse_make_golden_v1_4 ${TERSE_TEST_DATA}/make_golden_v1_4.cpp)
target_link_libraries(terse_make_golden_v1_4 PRIVATE terse::terse)
# Format 1.5: flight frames.
add_executable(terse_make_golden_v1_5 ${TERSE_TEST_DATA}/make_golden_v1_5.cpp)
target_link_libraries(terse_make_golden_v1_5 PRIVATE terse::terse)
# Format 2.0: columnar records and flight frames.
add_executable(terse_make_golden_v2_0 ${TERSE_TEST_DATA}/make_golden_v2_0.cpp)
target_link_libraries(terse_make_golden_v2_0 PRIVATE terse::terse)
# Format 2.1: patched strings.
add_executable(terse_make_golden_v2_1 ${TERSE_TEST_DATA}/make_golden_v2_1.cpp)
target_link_libraries(terse_make_golden_v2_1 PRIVATE terse::terse)
# Format 3.0: a sealed file, with its key.
add_executable(terse_make_golden_v3_0 ${TERSE_TEST_DATA}/make_golden_v3_0.cpp)
target_link_libraries(terse_make_golden_v3_0 PRIVATE terse::terse)
set(golden_versions 1.1 1.3 1.4 1.5 2.0 2.1)
if(TERSE_SODIUM)
  list(APPEND golden_versions 3.0)
endif()
if(TARGET terse_cli)
  foreach(version ${golden_versions})
    set(key_args "")
    set(key_option "")
    if(version STREQUAL "3.0")
      set(key_args "--key;${TERSE_TEST_DATA}/golden-v3.0.key")
      set(key_option --key ${TERSE_TEST_DATA}/golden-v3.0.key)
    endif()
    string(REPLACE "." "_" id ${version})
    foreach(output text json)
      if(output STREQUAL "json")
        set(args "${key_args};-o;json")
        set(expected ${TERSE_TEST_DATA}/golden-v${version}.jsonl)
      else()
        set(args "${key_args}")
        set(expected ${TERSE_TEST_DATA}/golden-v${version}.txt)
      endif()
      add_test(NAME golden_v${id}_${output}_test
               COMMAND ${CMAKE_COMMAND} "-DEMULATOR=${CMAKE_CROSSCOMPILING_EMULATOR}" -DCLI=$<TARGET_FILE:terse_cli>
                       -DFILE=${TERSE_TEST_DATA}/golden-v${version}.tlog
                       -DEXPECTED=${expected} "-DARGS=${args}" -P ${CMAKE_CURRENT_LIST_DIR}/decode_same.cmake)
      set_tests_properties(golden_v${id}_${output}_test PROPERTIES LABELS "files;decoder;cli")
    endforeach()
    # Every golden file is intact, by its frame numbers too where it has them.
    add_test(NAME golden_v${id}_verify_test COMMAND terse_cli verify ${key_option} ${TERSE_TEST_DATA}/golden-v${version}.tlog)
    set_tests_properties(golden_v${id}_verify_test PROPERTIES LABELS "files;decoder;cli")
  endforeach()
endif()
