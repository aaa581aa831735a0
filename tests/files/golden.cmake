# The golden file that pins format version 1: a test that decodes it and one
# that walks its bytes by the spec alone (schema/FORMAT.md), plus the program
# that wrote it, kept buildable so the file can be regenerated on purpose.
terse_add_test(golden_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/golden_test.cpp LABELS "decoder;format")
target_compile_definitions(golden_test PRIVATE TERSE_TEST_DATA="${TERSE_TEST_DATA}")
# The spec walker decompresses records frames itself, without the decoder.
target_link_libraries(golden_test PRIVATE zstd::libzstd_shared)

# Built so it never rots, but never run by ctest: running it writes a new file.
add_executable(terse_make_golden ${TERSE_TEST_DATA}/make_golden.cpp)
target_link_libraries(terse_make_golden PRIVATE terse::terse)
