"""The Python reader (python/terse_reader) against the reference decoder.

Run by ctest (tests/python/CMakeLists.txt), which passes in the environment:
TERSE_CLI (the terse binary of this build), TERSE_PYTHON_WRITER (a program that logs through
the public API), TERSE_PYTHON_PACKAGE (the package's source folder), TERSE_TEST_DATA (golden
files) and TERSE_FUZZ_CORPUS. Every record is compared with what `terse cat -o json` prints
for it; records the reader renders exactly must also match `terse cat --utc` line for line.
"""

from __future__ import annotations

import collections
import glob
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import warnings
from pathlib import Path

import pytest


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through ctest (tests/python/CMakeLists.txt)")
    return value


PACKAGE = _env("TERSE_PYTHON_PACKAGE")
sys.path.insert(0, PACKAGE)

import terse_reader  # noqa: E402
from terse_reader.frames import SYNC, Frame, FrameReader, crc32c  # noqa: E402
from terse_reader.records import Calibration, Clock, StreamDecoder  # noqa: E402

CLI = _env("TERSE_CLI")
DATA = Path(_env("TERSE_TEST_DATA"))
CORPUS = Path(_env("TERSE_FUZZ_CORPUS"))

# Records rendered exactly, per source, printed at the end of the run.
SHARES: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])


def cli(*args: str) -> list[str]:
    """The CLI's output lines; its exit code is not checked here (damaged inputs exit 1)."""
    done = subprocess.run([CLI, *args], capture_output=True, timeout=120)
    return done.stdout.decode("utf-8", "surrogateescape").splitlines()


def compare(label: str, records: list[terse_reader.Record], json_lines: list[str], text_lines: list[str] | None,
            text_of=lambda r: r.text()) -> None:
    """Every record's dict equals the CLI's JSON object (its message too, unless the reader
    flagged it as not exact); exact records' text equals the CLI's text line."""
    expected = [json.loads(line) for line in json_lines]
    assert len(records) == len(expected), f"{label}: {len(records)} records, the CLI printed {len(expected)}"
    if text_lines is not None:
        assert len(text_lines) == len(expected)
    share = SHARES[label]
    for i, (record, want) in enumerate(zip(records, expected)):
        got = dict(record)
        exact = got.pop("rendered_exactly", True)
        assert exact is True or exact is False
        if not exact:
            assert record.notes, f"{label} record {i}: flagged as not exact without a reason"
            got["message"] = want["message"]
        assert got == want, f"{label} record {i}"
        share[1] += 1
        if exact:
            share[0] += 1
            if text_lines is not None:
                assert text_of(record) == text_lines[i], f"{label} record {i} text"


def read_all(path: str | Path, utc: bool = False) -> tuple[list[terse_reader.Record], list[terse_reader.Problem]]:
    problems: list[terse_reader.Problem] = []
    records = list(terse_reader.read(str(path), on_problem=problems.append, utc=utc))
    return records, problems


def share_lines() -> list[str]:
    """The share of records rendered exactly, per source and overall (conftest.py prints it)."""
    exact = sum(s[0] for s in SHARES.values())
    total = sum(s[1] for s in SHARES.values())
    lines = [f"{label}: {e}/{n} ({100.0 * e / n:.1f} %)" for label, (e, n) in sorted(SHARES.items()) if n]
    return lines + [f"overall: {exact}/{total} ({100.0 * exact / max(total, 1):.1f} %)"]


# ---- 1. golden files ------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.1", "1.3", "1.4", "1.5", "2.0"])
def test_golden_files_match_their_expected_output(version: str) -> None:
    # The expected files were printed with --utc.
    records, problems = read_all(DATA / f"golden-v{version}.tlog", utc=True)
    assert problems == []
    json_lines = (DATA / f"golden-v{version}.jsonl").read_text(encoding="utf-8").splitlines()
    text_lines = (DATA / f"golden-v{version}.txt").read_text(encoding="utf-8").splitlines()
    compare(f"golden-v{version}", records, json_lines, text_lines)


def test_golden_v1_matches_the_cli() -> None:
    # golden-v1.txt holds "{level} {thread} {line} {message}" lines; the JSON comes from the CLI.
    # Printed with --utc: the drop report's message holds two times.
    path = DATA / "golden-v1.tlog"
    records, problems = read_all(path, utc=True)
    assert problems == []
    text_lines = (DATA / "golden-v1.txt").read_text(encoding="utf-8").splitlines()
    compare("golden-v1", records, cli("cat", "--utc", "-o", "json", str(path)), text_lines,
            lambda r: f"{r['level']} {r['thread']} {r['line']} {r['message']}")


# ---- 2. fuzz corpus and damage --------------------------------------------------------------


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang()


def within(seconds: float, fn):
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


CORPUS_FILES = sorted(glob.glob(str(CORPUS / "*")))


@pytest.mark.parametrize("path", CORPUS_FILES, ids=[os.path.basename(p) for p in CORPUS_FILES])
def test_fuzz_corpus_reads_without_foreign_exceptions_or_hangs(path: str) -> None:
    def run():
        try:
            return read_all(path)
        except terse_reader.TerseReadError:
            return None

    try:
        result = within(20, run)
    except Hang:
        pytest.fail(f"{path}: no result within 20 s")
    # Strict mode raises the reader's own error on damage and nothing else.
    try:
        within(20, lambda: list(terse_reader.read(path, strict=True)))
    except terse_reader.TerseReadError:
        pass
    if result is not None:
        records, _ = result
        compare("fuzz corpus", records, cli("cat", "-o", "json", path), None)


def _rebuilt(data: bytes, mutate) -> bytes:
    """The file with every frame stored uncompressed, ``mutate`` applied to the payloads and
    all checksums fixed, so the damage reaches the payload parsers instead of the checksums."""
    out = bytearray(data[:16])
    for item in FrameReader(data, lambda *_: None):
        if isinstance(item, Frame):
            payload = mutate(bytearray(item.payload))
            header = SYNC + struct.pack("<BBHIII", item.type, 0, 0, len(payload), len(payload), crc32c(payload))
            out += header + struct.pack("<I", crc32c(header)) + payload
    return bytes(out)


def test_damaged_payloads_with_good_checksums_raise_nothing_foreign() -> None:
    sources = [p for p in CORPUS_FILES + sorted(glob.glob(str(DATA / "*.tlog")))]
    rng = random.Random(20261202)
    blobs = [Path(p).read_bytes() for p in sources]

    def mutate(payload: bytearray) -> bytearray:
        if payload and rng.random() < 0.3:
            for _ in range(rng.randint(1, 3)):
                at = rng.randrange(len(payload))
                choice = rng.random()
                if choice < 0.4:
                    payload[at] ^= 1 << rng.randrange(8)
                elif choice < 0.7:
                    payload[at] = rng.choice([0x00, 0x01, 0x02, 0x7F, 0x80, 0xFD, 0xFE, 0xFF])
                elif choice < 0.85:
                    del payload[at:]
                    if not payload:
                        break
                else:
                    payload[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 6)))
        return payload

    for round_ in range(600):
        data = _rebuilt(rng.choice(blobs), mutate)
        if rng.random() < 0.2:
            data = data[: rng.randrange(len(data) + 1)]
        try:
            within(20, lambda: [r.text() for r in StreamDecoder(data, "mutated", lambda *_: None).records()])
        except Hang:
            pytest.fail(f"round {round_}: no result within 20 s")


def test_problems_are_reported_with_offsets_and_strict_mode_raises() -> None:
    data = bytearray((DATA / "golden-v2.0.tlog").read_bytes())
    first_records = next(f for f in FrameReader(bytes(data), lambda *_: None) if isinstance(f, Frame) and f.type == 6)
    data[first_records.offset + 24 + 3] ^= 0x10  # its payload: the frame fails its checksum
    damaged = Path(os.environ.get("TMPDIR", "/tmp")) / f"terse-python-damaged-{os.getpid()}.tlog"
    damaged.write_bytes(bytes(data))
    try:
        records, problems = read_all(damaged)
        assert problems and all(p.source == str(damaged) and p.offset >= 0 for p in problems)
        assert 0 < len(records) < 21
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert len(list(terse_reader.read(str(damaged)))) == len(records)
        assert any(issubclass(w.category, terse_reader.TerseWarning) for w in caught)
        with pytest.raises(terse_reader.TerseReadError):
            list(terse_reader.read(str(damaged), strict=True))
    finally:
        damaged.unlink()
    with pytest.raises(terse_reader.TerseReadError):
        list(terse_reader.read("/nonexistent/terse/file.tlog"))


def test_a_time_is_the_same_before_and_after_the_next_frame_on_its_line() -> None:
    # FORMAT.md §5, as tests/decoder/calibration_points_test.cpp checks the reference reader.
    clock = Clock()
    a = Calibration(625_000, 1_700_000_000_010_000_000, 62.5e6 * 1.000137)
    clock.add(Calibration(0, 1_700_000_000_000_000_000, 62.5e6))
    clock.add(a)
    ticks = [a.ticks + 1 + 7 * i for i in range(2000)]
    before = [clock.convert(t) for t in ticks]
    b_ticks = 1_875_000
    clock.add(Calibration(b_ticks, clock.convert(b_ticks), 62.5e6 * 0.999871))
    assert [clock.convert(t) for t in ticks] == before
    # A frame off the line (an older writer's) is still interpolated to.
    off = Clock()
    off.add(Calibration(0, 1_700_000_000_000_000_000, 1e9))
    off.add(Calibration(10_000_000, 1_700_000_000_010_000_050, 1e9))
    assert off.convert(5_000_000) == 1_700_000_000_005_000_025


# ---- 3. files the runtime writes ------------------------------------------------------------


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("written")
    subprocess.run([_env("TERSE_PYTHON_WRITER"), str(out), "variety"], check=True, timeout=120)
    return out


def test_written_files_match_the_cli_file_by_file(written: Path) -> None:
    files = sorted(written.glob("*.tlog"))
    assert len(files) > 1, "the writer should have rolled its files"
    for f in files:
        records, problems = read_all(f)
        assert problems == []
        compare("runtime files", records, cli("cat", "-o", "json", str(f)), cli("cat", str(f)))


def test_a_written_directory_matches_the_cli(written: Path) -> None:
    records, problems = read_all(written)
    assert problems == []
    compare("runtime directory", records, cli("cat", "-o", "json", str(written)), cli("cat", str(written)))
    kinds = {key for r in records for key in r}
    assert {"suppressed", "context", "flight"} <= kinds


def test_two_writers_in_one_directory_merge_as_the_cli_merges(tmp_path: Path) -> None:
    writer = _env("TERSE_PYTHON_WRITER")
    procs = [subprocess.Popen([writer, str(tmp_path), "ticker", name]) for name in ("alpha", "beta")]
    for p in procs:
        assert p.wait(timeout=120) == 0
    records, problems = read_all(tmp_path)
    assert problems == []
    compare("two writers", records, cli("cat", "-o", "json", str(tmp_path)), cli("cat", str(tmp_path)))


@pytest.mark.parametrize("zone", ["Asia/Kolkata", "America/St_Johns"])
def test_local_and_utc_times_match_the_cli_in_another_time_zone(written: Path, zone: str,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        for utc in (False, True):
            records, _ = read_all(written, utc=utc)
            flag = ["--utc"] if utc else []
            compare(f"runtime directory, TZ={zone}", records, cli("cat", "-o", "json", *flag, str(written)),
                    cli("cat", *flag, str(written)))
    finally:
        monkeypatch.undo()
        time.tzset()


def test_to_dataframe(written: Path) -> None:
    pandas = pytest.importorskip("pandas")
    frame = terse_reader.to_dataframe(written)
    assert len(frame) == len(list(terse_reader.read(written)))
    assert str(frame["time"].dtype) == "datetime64[ns, UTC]"
    assert pandas.api.types.is_integer_dtype(frame["line"])


# ---- 4. pip install -------------------------------------------------------------------------


def test_pip_installs_into_a_venv_without_network(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--no-index", "--no-build-isolation", "-q", str(source)],
                   check=True, timeout=300)
    probe = ("import json, sys, terse_reader; "
             "r = list(terse_reader.read(sys.argv[1], utc=True)); "
             "print(terse_reader.__file__); print(json.dumps(dict(r[0])))")
    done = subprocess.run([str(python), "-c", probe, str(DATA / "golden-v2.0.tlog")], capture_output=True, text=True,
                          check=True, timeout=120, cwd=tmp_path)
    installed, first = done.stdout.splitlines()
    assert installed.startswith(str(venv))
    expected = json.loads((DATA / "golden-v2.0.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert json.loads(first) == expected


def test_to_dataframe_without_pandas_says_what_is_missing() -> None:
    probe = ("import sys; sys.modules['pandas'] = None; import terse_reader\n"
             "try:\n    terse_reader.to_dataframe(sys.argv[1])\n"
             "except terse_reader.TerseReadError as e:\n    print(e)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(DATA / "golden-v2.0.tlog")], capture_output=True,
                          text=True, timeout=120, env={**os.environ, "PYTHONPATH": PACKAGE})
    assert "needs pandas" in done.stdout, done.stderr
