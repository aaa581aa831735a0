# Run by ctest in place of the Python reader's tests when configure found no
# interpreter that can run them: a failure that says why, never a silent pass.
message(FATAL_ERROR "python_reader_test: ${WHY}")
