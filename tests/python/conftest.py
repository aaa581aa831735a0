"""Prints, after the tests, the share of records that terse_reader rendered exactly."""

import sys


def pytest_terminal_summary(terminalreporter) -> None:
    module = sys.modules.get("test_reader")
    if module is not None and module.SHARES:
        terminalreporter.write_sep("-", "records rendered exactly (terse_reader), per source")
        for line in module.share_lines():
            terminalreporter.write_line(line)
