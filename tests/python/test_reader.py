"""The Python reader (python/terse_reader) against the reference decoder.

Run by ctest (tests/python/CMakeLists.txt), which passes in the environment:
TERSE_CLI (the terse binary of this build), TERSE_PYTHON_WRITER (a program that logs through
the public API), TERSE_DEMO (the example program, which takes TERSE_ENCRYPT_TO from the
environment and so writes sealed files), TERSE_PYTHON_PACKAGE (the package's source folder),
TERSE_TEST_DATA (golden files) and TERSE_FUZZ_CORPUS. Every record is compared with what
`terse cat -o json` prints for it; records the reader renders exactly must also match
`terse cat --utc` line for line.
"""

from __future__ import annotations

import base64
import collections
import glob
import importlib.util
import json
import os
import random
import re
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
from terse_reader.errors import Malformed  # noqa: E402
from terse_reader.frames import MAGIC, SYNC, Cursor, Frame, FrameReader, crc32c  # noqa: E402
from terse_reader.records import Calibration, Clock, StreamDecoder  # noqa: E402
from terse_reader.values import _patched  # noqa: E402

CLI = _env("TERSE_CLI")
DATA = Path(_env("TERSE_TEST_DATA"))
CORPUS = Path(_env("TERSE_FUZZ_CORPUS"))

# Records rendered exactly, per source, printed at the end of the run.
SHARES: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])


def cli(*args: str) -> list[str]:
    """The CLI's output lines; its exit code is not checked here (damaged inputs exit 1)."""
    done = subprocess.run([CLI, *args], capture_output=True, timeout=120)
    return done.stdout.decode("utf-8", "surrogateescape").splitlines()


def cli_problems(*args: str) -> list[tuple[int, bool, str]]:
    return cli_run(*args)[1]


def cli_run(*args: str) -> tuple[list[str], list[tuple[int, bool, str]]]:
    """The CLI's output lines, and the problems it reports on stderr, each (offset, tampering,
    reason); the torn tails this reader does not report (it says them only by ``torn_tail``)
    are left out."""
    done = subprocess.run([CLI, *args], capture_output=True, timeout=120)
    problems = []
    for line in done.stderr.decode("utf-8", "surrogateescape").splitlines():
        found = re.match(r"terse: .*?: offset (\d+): (.*)$", line)
        if found and "the writer stopped mid-write" not in found[2] and "ends inside its preamble" not in found[2]:
            problems.append((int(found[1]), found[2].startswith("tampering: "), found[2]))
    return done.stdout.decode("utf-8", "surrogateescape").splitlines(), problems


def same_tampering(label: str, problems: list[terse_reader.Problem], expected: list[tuple[int, bool, str]]) -> None:
    """The reader calls tampering what the CLI calls tampering, at the same offsets, and reports
    damage where the CLI does (FORMAT.md §11.5: only damage to the frames is tampering)."""
    assert all(p.tampering == p.reason.startswith("tampering: ") for p in problems), f"{label}: {problems}"
    assert sorted(p.offset for p in problems if p.tampering) == sorted(o for o, t, _ in expected if t), \
        f"{label}: {problems} {expected}"
    damage = [p for p in problems if not p.tampering and not p.torn_tail]
    assert bool(damage) == any(not t and "sealed file has no end frame" not in r for _, t, r in expected), \
        f"{label}: {problems} {expected}"


def compare(label: str, records: list[terse_reader.Record], json_lines: list[str], text_lines: list[str] | None,
            text_of=lambda r: r.text(), tally: bool = True) -> None:
    """Every record's dict equals the CLI's JSON object (its message too, unless the reader
    flagged it as not exact); exact records' text equals the CLI's text line. ``tally=False``
    leaves the records out of the shares printed at the end (the same records read again)."""
    expected = [json.loads(line) for line in json_lines]
    assert len(records) == len(expected), f"{label}: {len(records)} records, the CLI printed {len(expected)}"
    if text_lines is not None:
        assert len(text_lines) == len(expected)
    share = SHARES[label] if tally else [0, 0]
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


def read_all(path: str | Path, utc: bool = False,
             **kwargs) -> tuple[list[terse_reader.Record], list[terse_reader.Problem]]:
    problems: list[terse_reader.Problem] = []
    records = list(terse_reader.read(str(path), on_problem=problems.append, utc=utc, **kwargs))
    return records, problems


def share_lines() -> list[str]:
    """The share of records rendered exactly, per source and overall (conftest.py prints it)."""
    exact = sum(s[0] for s in SHARES.values())
    total = sum(s[1] for s in SHARES.values())
    lines = [f"{label}: {e}/{n} ({100.0 * e / n:.1f} %)" for label, (e, n) in sorted(SHARES.items()) if n]
    return lines + [f"overall: {exact}/{total} ({100.0 * exact / max(total, 1):.1f} %)"]


# ---- 1. golden files ------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.1", "1.3", "1.4", "1.5", "2.0", "2.1", "3.0"])
def test_golden_files_match_their_expected_output(version: str) -> None:
    # The expected files were printed with --utc; 3.0 is sealed to the key committed beside it,
    # and is opened from FORMAT.md §11 alone.
    key = str(DATA / f"golden-v{version}.key") if version == "3.0" else []
    records, problems = read_all(DATA / f"golden-v{version}.tlog", utc=True, key=key)
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


# ---- 5. sealed files (FORMAT.md §11) --------------------------------------------------------


class KeyPair:
    """A key pair `terse keygen` made, and the fingerprint it printed for it."""

    def __init__(self, secret: Path, fingerprint: str) -> None:
        self.secret = secret
        self.public = Path(f"{secret}.pub")
        self.fingerprint = fingerprint


def keygen(path: Path) -> KeyPair:
    done = subprocess.run([CLI, "keygen", str(path)], capture_output=True, text=True, timeout=120)
    if done.returncode != 0 and "without libsodium" in done.stderr:
        pytest.skip("this terse was built without libsodium, so nothing here writes sealed files")
    assert done.returncode == 0, done.stderr
    printed = dict(line.split(":", 1) for line in done.stdout.splitlines())
    return KeyPair(path, printed["fingerprint"].strip())


@pytest.fixture(scope="module")
def keys(tmp_path_factory) -> tuple[KeyPair, KeyPair]:
    """The key the files are sealed to, and another."""
    out = tmp_path_factory.mktemp("keys")
    pairs = keygen(out / "logs-key"), keygen(out / "other-key")
    if importlib.util.find_spec("nacl") is None:
        pytest.fail("terse seals files here, and reading them needs PyNaCl: install python3-nacl "
                    "(scripts/deps.sh test)")
    return pairs


def write_sealed(directory: Path, public: Path, sign_with: Path | None = None) -> Path:
    """The file the demo program writes with TERSE_ENCRYPT_TO=public, as a sealing service would,
    and its seal frame signed with TERSE_SIGN_WITH=sign_with where given."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TERSE_")}
    env.update(TERSE_ENCRYPT_TO=str(public), TERSE_CONSOLE="off")
    if sign_with is not None:
        env["TERSE_SIGN_WITH"] = str(sign_with)
    subprocess.run([_env("TERSE_DEMO"), str(directory)], check=True, capture_output=True, timeout=120, env=env)
    files = sorted(directory.glob("*.tlog"))
    assert len(files) == 1
    return files[0]


@pytest.fixture(scope="module")
def sealed(tmp_path_factory, keys: tuple[KeyPair, KeyPair]) -> Path:
    return write_sealed(tmp_path_factory.mktemp("sealed"), keys[0].public)


def frames_of(data: bytes) -> list[bytearray]:
    """An intact file's frames after its preamble, each its header and stored payload."""
    frames, pos = [], 16
    while pos < len(data):
        (stored,) = struct.unpack_from("<I", data, pos + 8)
        frames.append(bytearray(data[pos : pos + 24 + stored]))
        pos += 24 + stored
    return frames


def checksummed(frame: bytearray) -> bytearray:
    """The frame with good checksums again, so that a change gets past §9 to the seal."""
    frame[16:20] = struct.pack("<I", crc32c(bytes(frame[24:])))
    frame[20:24] = struct.pack("<I", crc32c(bytes(frame[:20])))
    return frame


def with_frames(data: bytes, frames: list[bytearray], path: Path) -> Path:
    path.write_bytes(data[:16] + b"".join(bytes(f) for f in frames))
    return path


def test_a_sealed_file_read_with_its_key_matches_the_cli(sealed: Path, keys: tuple[KeyPair, KeyPair]) -> None:
    data = sealed.read_bytes()
    assert data[8:12] == b"\x03\x00\x01\x00", "a sealed file is a 3.1 file"
    frames = frames_of(data)
    assert frames[0][4] == 8 and all(f[5] & 0x02 for f in frames[1:]), "the seal frame, then sealed frames"
    key = str(keys[0].secret)
    records, problems = read_all(sealed, key=key)
    assert problems == []
    assert len(records) > 1000
    compare("sealed file", records, cli("cat", "--key", key, "-o", "json", str(sealed)),
            cli("cat", "--key", key, str(sealed)))
    records, problems = read_all(sealed.parent, key=key)
    assert problems == []
    compare("sealed directory", records, cli("cat", "--key", key, "-o", "json", str(sealed.parent)), None,
            tally=False)


def test_keys_may_be_a_list_a_loaded_key_or_terse_key(sealed: Path, keys: tuple[KeyPair, KeyPair],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    right, other = keys
    count = len(read_all(sealed, key=right.secret)[0])
    loaded = terse_reader.load_key(right.secret)
    for key in ([str(other.secret), str(right.secret)], loaded, [terse_reader.load_key(other.secret), right.secret]):
        records, problems = read_all(sealed, key=key)
        assert problems == [] and len(records) == count
    monkeypatch.setenv("TERSE_KEY", str(right.secret))
    records, problems = read_all(sealed)
    assert problems == [] and len(records) == count
    if importlib.util.find_spec("pandas") is not None:
        assert len(terse_reader.to_dataframe(sealed)) == count
    records, problems = read_all(sealed, key=[])
    assert records == [] and len(problems) == 1


def test_fingerprints_are_what_keygen_and_ssh_keygen_print(keys: tuple[KeyPair, KeyPair]) -> None:
    ssh_keygen = shutil.which("ssh-keygen")
    for pair in keys:
        key = terse_reader.load_key(pair.secret)
        assert key.fingerprint == terse_reader.fingerprint(key.public_key) == pair.fingerprint
        assert "SHA256:" in repr(key) and key.secret.hex() not in repr(key)
        if ssh_keygen is not None:
            listed = subprocess.run([ssh_keygen, "-l", "-f", str(pair.public)], capture_output=True, text=True,
                                    check=True, timeout=120)
            assert listed.stdout.split()[1] == key.fingerprint


def test_a_sealed_file_without_its_key_names_the_key_it_needs(sealed: Path, tmp_path: Path,
                                                              keys: tuple[KeyPair, KeyPair]) -> None:
    right, other = keys
    records, problems = read_all(sealed, key=[])
    assert records == [] and cli("cat", "-o", "json", str(sealed)) == []
    [problem] = problems
    assert (problem.offset, problem.tampering, problem.torn_tail) == (16, False, False)
    assert f"sealed to key {right.fingerprint}" in problem.reason and "TERSE_KEY" in problem.reason
    records, problems = read_all(sealed, key=other.secret)
    assert records == [] and cli("cat", "--key", str(other.secret), "-o", "json", str(sealed)) == []
    [problem] = problems
    assert right.fingerprint in problem.reason and other.fingerprint in problem.reason and not problem.tampering
    # Without the key, §9 is all that is checked, and damage is not called tampering.
    frames = frames_of(sealed.read_bytes())
    frames[2][30] ^= 0x01
    damaged = with_frames(sealed.read_bytes(), frames, tmp_path / "damaged.tlog")
    records, problems = read_all(damaged, key=[])
    assert records == [] and len(problems) == 2 and not any(p.tampering for p in problems)


def _first(frames: list[bytearray], *types: int) -> int:
    return next(i for i, f in enumerate(frames) if f[4] in types)


def _flip_a_sealed_byte(frames: list[bytearray]) -> None:
    at = _first(frames, 4, 6)
    frames[at][24 + 8 + 3] ^= 0x20  # the ciphertext, not the counter
    checksummed(frames[at])


def _retype_the_dictionary(frames: list[bytearray]) -> None:
    # The header is bound too: a frame passed off as another type does not authenticate.
    at = _first(frames, 3)
    frames[at][4] = 4
    checksummed(frames[at])


def _remove_the_calibration(frames: list[bytearray]) -> None:
    del frames[_first(frames, 2)]


def _repeat_the_dictionary(frames: list[bytearray]) -> None:
    at = _first(frames, 3)
    frames.insert(at + 1, bytearray(frames[at]))


def _remove_the_info_frame(frames: list[bytearray]) -> None:
    # It carries no frame number: only its counter, 0, says it was there (§11.3).
    del frames[_first(frames, 1)]


def _repeat_the_info_frame(frames: list[bytearray]) -> None:
    frames.insert(_first(frames, 3), bytearray(frames[_first(frames, 1)]))


def _append_after_the_end(frames: list[bytearray]) -> None:
    frames.append(bytearray(frames[_first(frames, 4, 6)]))


def _insert_a_clear_frame(frames: list[bytearray]) -> None:
    plain = frames_of((DATA / "golden-v2.0.tlog").read_bytes())
    frames.insert(2, plain[_first(plain, 2)])


def _insert_a_second_seal(frames: list[bytearray]) -> None:
    frames.insert(2, bytearray(frames[0]))


def _insert_bytes_that_are_no_frame(frames: list[bytearray]) -> None:
    frames[1] += b"no frame here"


TAMPERING = {
    "flipped byte": (_flip_a_sealed_byte, "fails authentication"),
    "retyped frame": (_retype_the_dictionary, "fails authentication"),
    "removed frame": (_remove_the_calibration, "missing"),
    "repeated frame": (_repeat_the_dictionary, "repeats an earlier frame"),
    "removed info frame": (_remove_the_info_frame, "info frame is missing"),
    "repeated info frame": (_repeat_the_info_frame, "an info frame that is not the file's own"),
    "frame after the end": (_append_after_the_end, "after the end frame"),
    "frame in the clear": (_insert_a_clear_frame, "in the clear"),
    "second seal frame": (_insert_a_second_seal, "seal frame inside the file"),
    "bytes between frames": (_insert_bytes_that_are_no_frame, "skipped 13 bytes"),
}


@pytest.mark.parametrize("case", list(TAMPERING))
def test_tampering_is_reported_and_only_authenticated_records_are_shown(case: str, sealed: Path, tmp_path: Path,
                                                                        keys: tuple[KeyPair, KeyPair]) -> None:
    tamper, words = TAMPERING[case]
    frames = frames_of(sealed.read_bytes())
    tamper(frames)
    changed = with_frames(sealed.read_bytes(), frames, tmp_path / "changed.tlog")
    key = str(keys[0].secret)
    records, problems = read_all(changed, key=key)
    assert any(words in p.reason and p.tampering for p in problems), problems
    # What a frame lost to the change takes with it (records of sites its dictionary described,
    # the calibration it held) is reported as what the file now holds, not as tampering again.
    same_tampering(case, problems, cli_problems("cat", "--key", key, "-o", "json", str(changed)))
    compare("sealed, changed", records, cli("cat", "--key", key, "-o", "json", str(changed)), None, tally=False)
    with pytest.raises(terse_reader.TerseReadError) as caught:
        list(terse_reader.read(changed, key=key, strict=True))
    assert caught.value.problem == problems[0]


def test_a_sealed_file_without_its_end_frame_is_a_torn_tail(sealed: Path, tmp_path: Path,
                                                            keys: tuple[KeyPair, KeyPair]) -> None:
    data = sealed.read_bytes()
    frames = frames_of(data)
    assert frames[-1][4] == 9
    key = str(keys[0].secret)
    count = len(cli("cat", "--key", key, "-o", "json", str(sealed)))
    unclosed = with_frames(data, frames[:-1], tmp_path / "unclosed.tlog")
    cut = tmp_path / "cut.tlog"
    cut.write_bytes(data[:-10])  # inside the end frame
    for path in (unclosed, cut):
        records, problems = read_all(path, key=key)
        assert len(records) == count
        [problem] = problems
        assert problem.torn_tail and not problem.tampering and "sealed file has no end frame" in problem.reason


@pytest.mark.parametrize("source", ["the demo's", "sealed by the spec"])
def test_changed_sealed_files_raise_nothing_foreign(source: str, sealed: Path, written: Path, tmp_path: Path,
                                                   keys: tuple[KeyPair, KeyPair]) -> None:
    rng = random.Random(20261207)
    key = terse_reader.load_key(keys[0].secret)
    if source == "the demo's":
        data = sealed.read_bytes()
    else:
        # Many small frames, where the demo's file has one records frame: changes then land
        # between intact frames, and what is lost is told apart from what is tampering.
        data = sealed_by_the_spec(sorted(written.glob("*.tlog"))[0].read_bytes(), key.public_key)
    intact = tmp_path / "intact.tlog"
    intact.write_bytes(data)
    count = len(read_all(intact, key=key)[0])
    for round_ in range(150):
        frames = frames_of(data)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(frames))
            choice = rng.random()
            if choice < 0.5:
                frames[at][rng.randrange(len(frames[at]))] ^= 1 << rng.randrange(8)
            elif choice < 0.7:
                del frames[at][rng.randrange(24, max(25, len(frames[at]))):]
            elif choice < 0.85:
                frames.insert(rng.randrange(len(frames) + 1), bytearray(frames[at]))
            else:
                del frames[at]
            if frames and rng.random() < 0.8:
                checksummed(frames[min(at, len(frames) - 1)])
        changed = with_frames(data, frames, tmp_path / "changed.tlog")
        try:
            records, problems = within(20, lambda: read_all(changed, key=key))
        except Hang:
            pytest.fail(f"round {round_}: no result within 20 s")
        # A change nothing reports would be a record shown that its writer did not log.
        assert problems or len(records) == count, f"round {round_}"
        lines, expected = cli_run("cat", "--key", str(keys[0].secret), "-o", "json", str(changed))
        compare("sealed, changed at random", records, lines, None, tally=False)
        same_tampering(f"round {round_}", problems, expected)


def sealed_by_the_spec(plain: bytes, recipient: bytes) -> bytes:
    """The plain file sealed as FORMAT.md §11 says, by this test alone: that the reference reader
    reads it back as the plain file checks the spec from the writing side too."""
    from nacl import bindings as sodium

    file_key = os.urandom(32)
    seal = (b"\x01" + os.urandom(16) + recipient
            + sodium.crypto_box_seal(file_key, sodium.crypto_sign_ed25519_pk_to_curve25519(recipient))
            + struct.pack("<Q", 0x5EA1ED))

    def frame(head: bytes, payload: bytes) -> bytes:
        return bytes(checksummed(bytearray(head + bytes(8) + payload)))

    def sealed_frame(type_: int, flags: int, raw_size: int, message: bytes, counter: int) -> bytes:
        head = SYNC + struct.pack("<BBHII", type_, flags | 0x02, 0, len(message) + 24, raw_size)
        nonce = struct.pack("<Q", counter) + bytes(16)
        box = sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(message, head + seal, nonce, file_key)
        return frame(head, struct.pack("<Q", counter) + box)

    preamble = MAGIC + struct.pack("<HH", 3, 0)
    out = [preamble + struct.pack("<I", crc32c(preamble)), frame(SYNC + struct.pack("<BBHII", 8, 0, 0, len(seal),
                                                                                    len(seal)), seal)]
    frames = frames_of(plain)
    assert frames[0][4] == 1, "the info frame comes first, and takes counter 0 (§11.3)"
    for i, f in enumerate(frames):
        (raw_size,) = struct.unpack_from("<I", f, 12)
        # Counters after the info frame's 0 only need to differ (§11.3): gaps are allowed.
        out.append(sealed_frame(f[4], f[5], raw_size, bytes(f[24:]), 3 * i))
    end = bytes([len(frames)])  # the next frame number, one varint byte
    assert len(frames) < 0x80
    out.append(sealed_frame(9, 0, len(end), end, 3 * len(frames)))
    return b"".join(out)


def test_files_sealed_by_the_spec_alone_read_alike_in_both_readers(written: Path, tmp_path: Path,
                                                                   keys: tuple[KeyPair, KeyPair]) -> None:
    key = str(keys[0].secret)
    recipient = terse_reader.load_key(key).public_key
    plains = sorted(written.glob("*.tlog"))
    for plain in plains:
        sealed = tmp_path / plain.name
        sealed.write_bytes(sealed_by_the_spec(plain.read_bytes(), recipient))
        expected = cli("cat", "-o", "json", str(plain))
        assert cli("cat", "--key", key, "-o", "json", str(sealed)) == expected
        records, problems = read_all(sealed, key=key)
        assert problems == []
        compare("sealed by the spec", records, expected, cli("cat", str(plain)))
    # One records frame of many changed: only its records go.
    data = (tmp_path / plains[0].name).read_bytes()
    frames = frames_of(data)
    records_frames = [i for i, f in enumerate(frames) if f[4] in (4, 6)]
    assert len(records_frames) > 2
    at = records_frames[1]
    frames[at][-5] ^= 0x01  # the tag
    checksummed(frames[at])
    changed = with_frames(data, frames, tmp_path / "changed.tlog")
    records, problems = read_all(changed, key=key)
    assert [p.offset for p in problems] == [16 + sum(len(f) for f in frames[:at])]
    assert problems[0].tampering and "fails authentication" in problems[0].reason
    intact = len(cli("cat", "-o", "json", str(plains[0])))
    assert 0 < len(records) < intact
    compare("sealed by the spec, changed", records, cli("cat", "--key", key, "-o", "json", str(changed)), None)


def plain_frames(data: bytes) -> list[tuple[int, int, bytes, int]]:
    """A plain file's frames, each (type, flags, payload, raw_size), stored uncompressed."""
    return [(f.type, 0, f.payload, len(f.payload)) for f in FrameReader(data, lambda *_: None) if isinstance(f, Frame)]


def preamble(major: int, minor: int = 0, good: bool = True) -> bytes:
    head = MAGIC + struct.pack("<HH", major, minor)
    return head + struct.pack("<I", crc32c(head) ^ (0 if good else 1))


def plain_file(frames: list[tuple[int, int, bytes, int]]) -> bytes:
    out = [preamble(2)]
    for type_, flags, payload, raw_size in frames:
        head = SYNC + struct.pack("<BBHII", type_, flags, 0, len(payload), raw_size)
        out.append(bytes(checksummed(bytearray(head + bytes(8) + payload))))
    return b"".join(out)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    return bytes(out + bytes([value]))


def _first_log_record(frames: list[tuple[int, int, bytes, int]], change) -> None:
    """``change(payload, site_at, args_at, args_end)`` made to the first log record (§7, §7.4)
    of the first records frame: offsets of its site id, its args_size and its arguments' end."""
    at = next(i for i, f in enumerate(frames) if f[0] in (4, 6))
    type_, flags, payload, _ = frames[at]
    cur = Cursor(payload, 8)
    if type_ == 6:
        cur.take(cur.varint())
    while True:
        site_at = cur.pos
        site_id = cur.varint()
        cur.varint()
        if type_ == 4:
            cur.varint()
        args_at = cur.pos
        cur.take(cur.varint())
        if site_id != 0:
            changed = change(payload, site_at, args_at, cur.pos)
            frames[at] = (type_, flags, changed, len(changed))
            return


def _one_byte_more(frames: list[tuple[int, int, bytes, int]]) -> None:
    def change(payload: bytes, site_at: int, args_at: int, end: int) -> bytes:
        size = Cursor(payload, args_at).varint()
        return payload[:args_at] + _varint(size + 1) + payload[end - size : end] + b"\0" + payload[end:]

    _first_log_record(frames, change)


def _a_site_never_described(frames: list[tuple[int, int, bytes, int]]) -> None:
    def change(payload: bytes, site_at: int, args_at: int, end: int) -> bytes:
        site = Cursor(payload, site_at)
        site.varint()
        return payload[:site_at] + _varint(999_999) + payload[site.pos :]

    _first_log_record(frames, change)


def _a_payload_that_does_not_decompress(frames: list[tuple[int, int, bytes, int]]) -> None:
    at = next(i for i, f in enumerate(frames) if f[0] == 3)
    frames[at] = (3, 0x01, b"\x28\xb5\x2f\xfd is no zstd frame", 100)


def _no_usable_calibration(frames: list[tuple[int, int, bytes, int]]) -> None:
    for i, (type_, flags, payload, raw_size) in enumerate(frames):
        if type_ == 2:  # rate 0, its frame number kept
            frames[i] = (type_, flags, payload[:16] + bytes(8) + payload[24:], raw_size)


def _a_dictionary_entry_cut_short(frames: list[tuple[int, int, bytes, int]]) -> None:
    at = next(i for i, f in enumerate(frames) if f[0] == 3)
    payload = frames[at][2] + b"\x01\x02\x05\x02"  # a call site's entry, two bytes long
    frames[at] = (3, 0, payload, len(payload))


INSIDE_FRAMES = {
    "a record that does not match its site": (_one_byte_more, "does not match"),
    "a record of a site never described": (_a_site_never_described, "999999"),
    "a payload that does not decompress": (_a_payload_that_does_not_decompress, "decompress"),
    "records before any calibration": (_no_usable_calibration, "records before any clock calibration"),
    "a malformed dictionary entry": (_a_dictionary_entry_cut_short, "dictionary entry"),
}


@pytest.mark.parametrize("case", list(INSIDE_FRAMES))
def test_problems_inside_frames_that_authenticate_are_damage_not_tampering(case: str, written: Path, tmp_path: Path,
                                                                           keys: tuple[KeyPair, KeyPair]) -> None:
    # FORMAT.md §11.5: a frame that authenticated holds what its writer wrote, wrong or not.
    change, words = INSIDE_FRAMES[case]
    key = str(keys[0].secret)
    frames = plain_frames(sorted(written.glob("*.tlog"))[0].read_bytes())
    change(frames)
    path = tmp_path / "sealed.tlog"
    path.write_bytes(sealed_by_the_spec(plain_file(frames), terse_reader.load_key(key).public_key))
    records, problems = read_all(path, key=key)
    assert any(words in p.reason for p in problems), problems
    assert not any(p.tampering or p.torn_tail for p in problems), problems
    same_tampering(case, problems, cli_problems("cat", "--key", key, "-o", "json", str(path)))
    compare("sealed, damaged inside", records, cli("cat", "--key", key, "-o", "json", str(path)), None, tally=False)
    verdict = subprocess.run([CLI, "verify", "--key", key, str(path)], capture_output=True, text=True, timeout=120)
    assert verdict.returncode == 1 and "DAMAGED" in verdict.stdout and "TAMPERED" not in verdict.stdout


def test_a_seal_frame_that_its_own_key_does_not_open_is_tampering(sealed: Path, tmp_path: Path,
                                                                  keys: tuple[KeyPair, KeyPair]) -> None:
    right, other = keys
    data = sealed.read_bytes()
    frames = frames_of(data)
    frames[0][24 + 49 + 40] ^= 0x01  # the sealed file key (§11.1)
    changed = with_frames(data, [checksummed(frames[0])] + frames[1:], tmp_path / "changed.tlog")
    records, problems = read_all(changed, key=right.secret)
    assert records == []
    [problem] = problems
    assert (problem.offset, problem.tampering) == (16, True)
    assert "does not open" in problem.reason and right.fingerprint in problem.reason
    same_tampering("changed file key", problems, cli_problems("cat", "--key", str(right.secret), str(changed)))
    verdict = subprocess.run([CLI, "verify", "--key", str(right.secret), str(changed)], capture_output=True, text=True,
                             timeout=120)
    assert "TAMPERED" in verdict.stdout
    # Sealed to another key than the one given: nothing says it was changed, and nothing opens.
    frames = frames_of(data)
    frames[0][24 + 17 : 24 + 49] = terse_reader.load_key(other.secret).public_key
    resealed = with_frames(data, [checksummed(frames[0])] + frames[1:], tmp_path / "resealed.tlog")
    records, problems = read_all(resealed, key=right.secret)
    assert records == []
    [problem] = problems
    assert not problem.tampering and right.fingerprint in problem.reason and other.fingerprint in problem.reason
    same_tampering("another recipient", problems, cli_problems("cat", "--key", str(right.secret), str(resealed)))
    # ... unless the key given is that other one: then its file key should open with it, and does not.
    records, problems = read_all(resealed, key=other.secret)
    assert records == [] and [p.tampering for p in problems] == [True]
    same_tampering("another recipient, its key", problems, cli_problems("cat", "--key", str(other.secret),
                                                                         str(resealed)))


def test_only_a_file_of_format_3_is_sealed(written: Path, sealed: Path, tmp_path: Path,
                                           keys: tuple[KeyPair, KeyPair]) -> None:
    key = str(keys[0].secret)
    plain = sorted(written.glob("*.tlog"))[0].read_bytes()
    data = sealed.read_bytes()
    # Nothing was opened in a 3.x file without its seal frame; a 2.x file that has one, opened
    # with its key, was changed. A preamble whose checksum fails says no version (§2).
    cases = {
        "3.0 without a seal frame": (preamble(3) + plain[16:], "a file of format 3.x that does not start with its "
                                     "seal frame", False),
        "2.0 with a seal frame": (preamble(2) + data[16:], "a seal frame in a file of format 2.x, which has none",
                                  True),
        "1.5 with a seal frame": (preamble(1, 5) + data[16:], "a seal frame in a file of format 1.x", True),
        "3.0 without a seal frame, its preamble damaged": (preamble(3, 0, False) + plain[16:], "preamble checksum",
                                                           False),
        "2.0 with a seal frame, its preamble damaged": (preamble(2, 0, False) + data[16:], "preamble checksum", False),
    }
    for case, (content, words, tampering) in cases.items():
        path = tmp_path / "changed.tlog"
        path.write_bytes(content)
        records, problems = read_all(path, key=key)
        [problem] = problems
        assert words in problem.reason and problem.tampering == tampering, case
        same_tampering(case, problems, cli_problems("cat", "--key", key, str(path)))
        compare(case, records, cli("cat", "--key", key, "-o", "json", str(path)), None, tally=False)


def test_a_sealed_file_names_the_file_closed_before_it(written: Path, keys: tuple[KeyPair, KeyPair]) -> None:
    key = terse_reader.load_key(keys[0].secret)
    previous = bytes(range(16))
    frames = plain_frames(sorted(written.glob("*.tlog"))[0].read_bytes())
    assert frames[0][0] == 1
    info = frames[0][2] + b"\x0a\x10" + previous  # info key 10 (§4)
    frames[0] = (1, 0, info, len(info))
    for keys_given, named in (([key], [previous.hex()]), ([], [])):
        data = sealed_by_the_spec(plain_file(frames), key.public_key)
        decoder = StreamDecoder(data, "sealed", lambda *_: None, keys=keys_given)
        records = list(decoder.records())
        assert bool(records) == bool(keys_given)
        # Only what authenticated is taken: without the key, nothing of the info frame is.
        assert [f.previous for f in decoder.sealed_files] == named
        assert [(f.file_id, f.ended) for f in decoder.sealed_files] == [(data[41:57].hex(), True)] * len(named)


def test_key_files_that_are_not_usable_keys_raise_naming_the_file(tmp_path: Path, keys: tuple[KeyPair, KeyPair],
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    # ssh-keygen, which unlocks keys protected by a passphrase, gets no answer (and asks no terminal).
    monkeypatch.setenv("SSH_ASKPASS", "false")
    monkeypatch.setenv("SSH_ASKPASS_REQUIRE", "force")
    text = keys[0].secret.read_text()
    lines = text.splitlines()
    blob = base64.b64decode("".join(lines[1:-1]))
    magic = b"openssh-key-v1\0"
    unlocked = magic + struct.pack(">I", 4) + b"none"
    assert blob.startswith(unlocked)
    locked = magic + struct.pack(">I", 10) + b"aes256-ctr" + blob[len(unlocked) :]
    cases = {
        "protected": ("\n".join([lines[0], base64.b64encode(locked).decode(), lines[-1]]) + "\n", "passphrase"),
        "public": (keys[0].public.read_text(), "a public key"),
        "cut": ("\n".join(lines[:2] + lines[-1:]) + "\n", "cut short"),
        "text": ("not a key at all\n", "not an OpenSSH private key"),
    }
    for name, (content, words) in cases.items():
        path = tmp_path / name
        path.write_text(content)
        # read() reads its keys at once, before any record is asked for.
        with pytest.raises(terse_reader.TerseReadError, match=words) as caught:
            terse_reader.read(DATA / "golden-v2.0.tlog", key=[keys[0].secret, path])
        assert str(path) in str(caught.value)
    with pytest.raises(terse_reader.TerseReadError, match="cannot read key file"):
        terse_reader.load_key(tmp_path / "missing")


def test_ssh_keygen_keys_open_sealed_files(tmp_path: Path, keys: tuple[KeyPair, KeyPair],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    ssh_keygen = shutil.which("ssh-keygen")
    if ssh_keygen is None:
        pytest.skip("ssh-keygen is not installed (Debian: openssh-client)")

    def make(name: str, *args: str) -> Path:
        path = tmp_path / name
        subprocess.run([ssh_keygen, "-q", *args, "-f", str(path)], check=True, capture_output=True, timeout=120)
        return path

    key = make("id_ed25519", "-t", "ed25519", "-N", "", "-C", "ops")
    loaded = terse_reader.load_key(key)
    listed = subprocess.run([ssh_keygen, "-l", "-f", f"{key}.pub"], capture_output=True, text=True, check=True,
                            timeout=120)
    assert (loaded.fingerprint, loaded.comment) == (listed.stdout.split()[1], "ops")
    sealed = write_sealed(tmp_path / "logs", Path(f"{key}.pub"))
    records, problems = read_all(sealed, key=key)
    assert problems == [] and records
    compare("sealed to an ssh-keygen key", records, cli("cat", "--key", str(key), "-o", "json", str(sealed)), None)
    with pytest.raises(terse_reader.TerseReadError, match="ecdsa-sha2-nistp256") as caught:
        terse_reader.read(sealed, key=make("id_ecdsa", "-t", "ecdsa", "-N", ""))
    assert "id_ecdsa" in str(caught.value)

    # A key protected by a passphrase: ssh-keygen unlocks a copy, asking through SSH_ASKPASS.
    locked = make("locked", "-t", "ed25519", "-N", "a passphrase", "-C", "ops")
    locked_bytes = locked.read_bytes()
    sealed_to_locked = write_sealed(tmp_path / "locked-logs", Path(f"{locked}.pub"))
    monkeypatch.setenv("SSH_ASKPASS_REQUIRE", "force")
    for name, answer in (("right", "a passphrase"), ("wrong", "other words")):
        script = tmp_path / name
        script.write_text(f"#!/bin/sh\necho '{answer}'\n")
        script.chmod(0o700)
    monkeypatch.setenv("SSH_ASKPASS", str(tmp_path / "right"))
    records, problems = read_all(sealed_to_locked, key=locked)
    assert problems == [] and records
    expected = terse_reader.load_key(locked).fingerprint
    saved_stdin = os.dup(0)  # with standard input closed, the copy must not become descriptor 0
    try:
        os.close(0)
        assert terse_reader.load_key(locked).fingerprint == expected
    finally:
        os.dup2(saved_stdin, 0)
        os.close(saved_stdin)
    compare("sealed to a key with a passphrase", records,
            cli("cat", "--key", str(locked), "-o", "json", str(sealed_to_locked)), None)
    monkeypatch.setenv("SSH_ASKPASS", str(tmp_path / "wrong"))
    with pytest.raises(terse_reader.TerseReadError, match="ssh-keygen did not unlock it") as caught:
        terse_reader.load_key(locked)
    assert str(locked) in str(caught.value) and "incorrect passphrase" in str(caught.value)
    assert "/dev/fd/" not in str(caught.value)
    monkeypatch.setenv("PATH", str(tmp_path / "none"))
    with pytest.raises(terse_reader.TerseReadError, match="ssh-keygen") as caught:
        terse_reader.load_key(locked)
    assert "passphrase" in str(caught.value)
    assert locked.read_bytes() == locked_bytes  # only ever a copy is rewritten


def test_without_pynacl_plain_files_read_and_sealed_ones_say_what_is_missing(sealed: Path,
                                                                              keys: tuple[KeyPair, KeyPair]) -> None:
    probe = ("import sys; sys.modules['nacl'] = None; import terse_reader\n"
             "plain = list(terse_reader.read(sys.argv[1], key=sys.argv[3]))\n"
             "problems = []\n"
             "sealed = list(terse_reader.read(sys.argv[2], key=sys.argv[3], on_problem=problems.append))\n"
             "print(len(plain), len(sealed), len(problems)); print(problems[0].reason)\n")
    golden = DATA / "golden-v2.0.tlog"
    done = subprocess.run([sys.executable, "-c", probe, str(golden), str(sealed), str(keys[0].secret)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": PACKAGE})
    counts, reason = done.stdout.splitlines()
    assert counts == f"{len(read_all(golden)[0])} 0 1", done.stderr
    assert "PyNaCl" in reason and keys[0].fingerprint in reason


# ---- signed seal frames (FORMAT.md §11.1) ---------------------------------------------------

SIGNER_AT = 24 + 137  # in the seal frame as stored: its header, then the payload's bytes 137-168
SIGNATURE_AT = 24 + 169


@pytest.fixture(scope="module")
def writer(tmp_path_factory) -> KeyPair:
    """The key a writer signs its seal frames with (Config::sign_with, TERSE_SIGN_WITH)."""
    return keygen(tmp_path_factory.mktemp("writer") / "writer-key")


@pytest.fixture(scope="module")
def signed(tmp_path_factory, keys: tuple[KeyPair, KeyPair], writer: KeyPair) -> Path:
    return write_sealed(tmp_path_factory.mktemp("signed"), keys[0].public, writer.secret)


def read_stream(path: Path, **kwargs) -> tuple[StreamDecoder, list[terse_reader.Record], list[terse_reader.Problem]]:
    """One file read by a StreamDecoder, which keeps what it saw of the seal (``signed_by``)."""
    problems: list[terse_reader.Problem] = []

    def report(source: str, offset: int, reason: str, tampering: bool = False, torn_tail: bool = False) -> None:
        problems.append(terse_reader.Problem(source, offset, reason, tampering, torn_tail))

    decoder = StreamDecoder(path.read_bytes(), str(path), report, **kwargs)
    return decoder, list(decoder.records()), problems


def signature_problems(problems: list) -> list[tuple[int, bool, str]]:
    """The problems about the seal's signature, each (offset, tampering, reason), from this reader
    or from ``cli_problems``."""
    out = [(p.offset, p.tampering, p.reason) if isinstance(p, terse_reader.Problem) else p for p in problems]
    return [p for p in out if "signature" in p[2] or "--signer" in p[2]]


def verified(*args: str) -> str:
    return subprocess.run([CLI, "verify", *args], capture_output=True, text=True, timeout=120).stdout


def test_a_signed_file_reads_with_its_key_and_names_its_signer(signed: Path, sealed: Path,
                                                                keys: tuple[KeyPair, KeyPair], writer: KeyPair) -> None:
    right = keys[0]
    frames = frames_of(signed.read_bytes())
    assert frames[0][4] == 8 and len(frames[0]) == 24 + 233, "a signed seal frame"
    writer_key = terse_reader.load_public_key(writer.public)
    assert writer_key.fingerprint == writer.fingerprint and writer_key.public_key == bytes(frames[0][SIGNER_AT:
                                                                                                     SIGNATURE_AT])
    # As --signer, a private key file stands for its public half.
    assert terse_reader.load_public_key(writer.secret).public_key == writer_key.public_key
    expected = cli("cat", "--key", str(right.secret), "--signer", str(writer.public), "-o", "json", str(signed))
    for signers in (None, [], writer.public, [keys[1].public, writer_key], terse_reader.load_key(writer.secret)):
        records, problems = read_all(signed, key=right.secret, signers=signers)
        assert problems == []
        compare("signed file", records, expected, None, tally=signers is None)
    stdout = verified("--key", str(right.secret), "--signer", str(writer.public), str(signed))
    assert f"signed by {writer.fingerprint})" in stdout and ": ok (" in stdout
    decoder, records, problems = read_stream(signed, keys=[terse_reader.load_key(right.secret)],
                                             signers=[writer_key])
    assert problems == [] and records
    assert decoder.signed_by == [writer.fingerprint] == re.findall(r"signed by (\S+)\)", stdout)
    assert [f.signed_by for f in decoder.sealed_files] == [writer.fingerprint]
    # The signature is checked without the recipient's key too, as the CLI checks it.
    decoder, records, problems = read_stream(signed)
    assert decoder.signed_by == [writer.fingerprint] and records == [] and decoder.sealed_files == []
    assert f"signed by {writer.fingerprint})" in verified(str(signed))
    # A file sealed without a signing key names no signer.
    decoder, _, problems = read_stream(sealed, keys=[terse_reader.load_key(right.secret)])
    assert problems == [] and decoder.signed_by == [] and [f.signed_by for f in decoder.sealed_files] == [""]
    assert "signed by" not in verified("--key", str(right.secret), str(sealed))


def test_a_signature_that_does_not_hold_is_reported_as_the_cli_reports_it(signed: Path, tmp_path: Path,
                                                                           keys: tuple[KeyPair, KeyPair],
                                                                           writer: KeyPair) -> None:
    right = keys[0]
    data = signed.read_bytes()
    frames = frames_of(data)
    frames[0][SIGNATURE_AT + 10] ^= 0x04
    changed = with_frames(data, [checksummed(frames[0])] + frames[1:], tmp_path / "changed.tlog")
    says = f"the seal frame's signature by {writer.fingerprint} does not hold"
    for key, tampering in ((str(right.secret), True), ([], False)):
        args = ["--key", key] if key else []
        lines, expected = cli_run("cat", *args, "-o", "json", str(changed))
        # Asked for the writer that signed it or not, the signature is what fails.
        for signers in ([], [writer.public]):
            decoder, records, problems = read_stream(changed, keys=[terse_reader.load_key(k) for k in args[1:]],
                                                     signers=[terse_reader.load_public_key(s) for s in signers])
            assert signature_problems(problems) == [(16, tampering, ("tampering: " if tampering else "") + says)]
            assert signature_problems(problems) == signature_problems(expected)
            assert decoder.signed_by == []
            same_tampering(f"changed signature, key {bool(key)}", problems, expected)
            # The seal frame is bound to every sealed frame: none of them opens now.
            compare("changed signature", records, lines, None, tally=False)
        stdout = verified(*args, str(changed))
        assert "signed by" not in stdout and ("TAMPERED" in stdout) == tampering


def test_a_seal_frame_between_unsigned_and_signed_sizes_is_rejected(signed: Path, tmp_path: Path,
                                                                    keys: tuple[KeyPair, KeyPair],
                                                                    writer: KeyPair) -> None:
    right = keys[0]
    data = signed.read_bytes()

    def resized(size: int) -> Path:
        frames = frames_of(data)
        seal = frames[0][:24] + (frames[0][24:] + bytes(256))[:size]
        seal[8:16] = struct.pack("<II", size, size)
        return with_frames(data, [checksummed(seal)] + frames[1:], tmp_path / f"seal-{size}.tlog")

    for size in (138, 200, 232, 257):
        path = resized(size)
        expected = cli_problems("cat", "--key", str(right.secret), str(path))
        decoder, records, problems = read_stream(path, keys=[terse_reader.load_key(right.secret)])
        assert records == [] and decoder.signed_by == []
        assert [p.offset for p in problems] == [o for o, _, _ in expected] == [16], (size, problems, expected)
        assert "seal frame has the wrong size" in problems[0].reason and "wrong size" in expected[0][2]
        same_tampering(f"seal of {size} bytes", problems, expected)
    # Bytes after the signature are a later minor version's: not signed, but bound to every frame.
    path = resized(256)
    decoder, records, problems = read_stream(path)
    assert problems[0].offset == 16 and decoder.signed_by == [writer.fingerprint]
    assert f"signed by {writer.fingerprint})" in verified(str(path))
    lines, expected = cli_run("cat", "--key", str(right.secret), "-o", "json", str(path))
    decoder, records, problems = read_stream(path, keys=[terse_reader.load_key(right.secret)])
    assert decoder.signed_by == [writer.fingerprint] and records == [] and lines == []
    assert any("fails authentication" in p.reason for p in problems)
    same_tampering("seal of 256 bytes", problems, expected)


def test_a_writer_asked_for_must_have_signed_the_file(signed: Path, sealed: Path, keys: tuple[KeyPair, KeyPair],
                                                      writer: KeyPair, monkeypatch: pytest.MonkeyPatch) -> None:
    right, other = keys
    cases = {
        "signed by another": (signed, other.public,
                              f"the file is signed by {writer.fingerprint}, not by a writer asked for (--signer)"),
        "not signed": (sealed, writer.public,
                       "the file is not signed, and a writer's signature was asked for (--signer)"),
    }
    for case, (path, signer, says) in cases.items():
        count = len(cli("cat", "--key", str(right.secret), "-o", "json", str(path)))
        for key, tampering in ((str(right.secret), True), ([], False)):
            args = ["--key", key] if key else []
            lines, expected = cli_run("cat", *args, "--signer", str(signer), "-o", "json", str(path))
            records, problems = read_all(path, key=key, signers=signer)
            assert signature_problems(problems) == [(16, tampering, ("tampering: " if tampering else "") + says)]
            assert signature_problems(problems) == signature_problems(expected), case
            same_tampering(case, problems, expected)
            # Who signed it is said; what it holds is shown all the same, as the CLI shows it.
            compare(case, records, lines, None, tally=False)
            assert len(records) == (count if key else 0)
            stdout = verified(*args, "--signer", str(signer), str(path))
            assert ("TAMPERED" if tampering else "DAMAGED") in stdout, stdout
        # TERSE_SIGNER stands for --signer, for both readers.
        monkeypatch.setenv("TERSE_SIGNER", str(signer))
        records, problems = read_all(path, key=right.secret)
        assert signature_problems(problems) == signature_problems(
            cli_problems("cat", "--key", str(right.secret), str(path))) == [(16, True, "tampering: " + says)]
        assert read_all(path, key=right.secret, signers=[])[1] == []
        monkeypatch.delenv("TERSE_SIGNER")
    # A plain file has no seal to sign: nothing to say, in either reader.
    golden = DATA / "golden-v2.0.tlog"
    assert read_all(golden, signers=writer.public)[1] == [] == cli_problems("cat", "--signer", str(writer.public),
                                                                          str(golden))


def test_signer_key_files_that_are_not_public_keys_raise_naming_the_file(tmp_path: Path, writer: KeyPair) -> None:
    line = writer.public.read_text()
    kind, blob, comment = line.split(None, 2)
    cases = {
        "rsa": (line.replace("ssh-ed25519", "ssh-rsa", 1), "a key of type ssh-rsa"),
        "text": ("not a key at all\n", "not an OpenSSH public key"),
        "empty": ("\n", "empty, not a key"),
        "bare": (kind + "\n", "cut short"),
        "base64": (f"{kind} {blob[:-3]}!! {comment}", "base64"),
        "short": (f"{kind} {base64.b64encode(base64.b64decode(blob)[:-1]).decode()} {comment}", "cut short"),
    }
    for name, (content, words) in cases.items():
        path = tmp_path / name
        path.write_text(content)
        with pytest.raises(terse_reader.TerseReadError, match=words) as caught:
            terse_reader.read(DATA / "golden-v2.0.tlog", signers=[writer.public, path])
        assert str(path) in str(caught.value)
        # The CLI refuses it too, before reading anything.
        done = subprocess.run([CLI, "cat", "--signer", str(path), str(DATA / "golden-v2.0.tlog")],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode != 0 and done.stdout == "" and "--signer" in done.stderr, name
    with pytest.raises(terse_reader.TerseReadError, match="neither"):
        terse_reader.read(DATA / "golden-v2.0.tlog", signers=[b"\0" * 32])
    with pytest.raises(terse_reader.TerseReadError, match="cannot read key file"):
        terse_reader.load_public_key(tmp_path / "missing.pub")


def test_without_pynacl_a_signature_asked_for_says_it_cannot_be_checked(signed: Path, keys: tuple[KeyPair, KeyPair],
                                                                        writer: KeyPair) -> None:
    probe = ("import sys; sys.modules['nacl'] = None; import terse_reader\n"
             "for signers in ([], sys.argv[3]):\n"
             "    problems = []\n"
             "    list(terse_reader.read(sys.argv[1], key=sys.argv[2], signers=signers, on_problem=problems.append))\n"
             "    print(len(problems)); print(problems[0].reason)\n")
    done = subprocess.run([sys.executable, "-c", probe, str(signed), str(keys[0].secret), str(writer.public)],
                          capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": PACKAGE})
    unasked, opening, asked, signature = done.stdout.splitlines()
    # Opening the file says already what is missing; a signature asked for says it once more.
    assert (unasked, asked) == ("1", "2"), done.stderr
    assert "PyNaCl" in opening and keys[0].fingerprint in opening
    assert "PyNaCl" in signature and f"signature by {writer.fingerprint} cannot be checked" in signature


# ---- 6. patched strings (FORMAT.md §8, 3.1) -------------------------------------------------

# Files written here by hand: the runtime writes a patched string only where its sampling finds
# an earlier entry of the same length, so neither every kind of patch nor a malformed one
# would come out of it.
PATCHED_BASE = b"0123456789abcdefghij"  # text entry 7
PATCHED_SITE, STRUCTURED_SITE = 1, 2  # "{} {}" of (string, u32); "{}" of a structured string


def _text(data: bytes) -> bytes:
    return _varint(len(data)) + data


def _entry(kind: int, body: bytes) -> bytes:
    return bytes([kind]) + _varint(len(body)) + body


def _site(site_id: int, fmt: bytes, tags: bytes, types: bytes = b"") -> bytes:
    body = _varint(site_id) + b"\x02" + _varint(10 * site_id) + _text(b"patched.cpp") + _text(fmt)
    return _entry(1, body + _varint(len(tags)) + tags + types)


def _patched_string(text_id: int, patches: list[tuple[int, int, bytes]] | bytes) -> bytes:
    """A top-level string argument with header 0xFFFFFFFC; ``patches`` as (skip, removed,
    inserted bytes), or their encoding as it is to stand."""
    if not isinstance(patches, bytes):
        patches = b"".join(_varint(s) + _varint(r) + _text(i) for s, r, i in patches)
    return struct.pack("<III", 0xFFFFFFFC, text_id, len(patches)) + patches


def _plain_string(data: bytes) -> bytes:
    return struct.pack("<I", len(data)) + data


def _patched_file(path: Path, frames: list[list[tuple[int, bytes, int | None]]]) -> Path:
    """A 2.1 file of the text entry, the two sites and one records frame per item of
    ``frames``, each record (site, string argument, u32 value or None for a structured site);
    the u32 (PATCHED_SITE's alone) is delta-coded against the previous one in its frame (§7.1)."""

    def frame(type_: int, payload: bytes) -> bytes:
        head = SYNC + struct.pack("<BBHII", type_, 0, 0, len(payload), len(payload))
        return bytes(checksummed(bytearray(head + bytes(8) + payload)))

    dictionary = (_entry(2, _varint(1) + _varint(4242) + _text(b"main"))
                  + _site(PATCHED_SITE, b"{} {}", b"\x0f\x07")
                  + _site(STRUCTURED_SITE, b"{}", b"\x11", _varint(1) + b"\x0f")
                  + _entry(3, _varint(7) + _text(PATCHED_BASE)))
    out = [preamble(2, 1), frame(1, b""), frame(2, struct.pack("<Qqd", 0, 1_700_000_000_000_000_000, 1e9)),
           frame(3, dictionary)]
    for records in frames:
        payload, previous = bytearray(struct.pack("<Q", 1000)), 0
        for site, string, value in records:
            if value is None:
                args = struct.pack("<I", len(string)) + string
            else:
                args = string + struct.pack("<I", (value - previous) % (1 << 32))
                previous = value
            payload += _varint(site) + _varint(1) + _varint(2) + _varint(len(args)) + args
        out.append(frame(4, bytes(payload)))
    path.write_bytes(b"".join(out))
    return path


def _same_as_the_cli(path: Path, records: list[terse_reader.Record], problems: list[terse_reader.Problem]) -> None:
    compare("patched strings", records, cli("cat", "-o", "json", str(path)), cli("cat", str(path)), tally=False)
    # Where, not how often: the CLI says once what this reader says for each record it skips.
    assert {p.offset for p in problems} == {o for o, _, _ in cli_problems("cat", "-o", "json", str(path))}


PATCHES = [
    ([(4, 2, b"XY")], b"0123XY6789abcdefghij"),  # in the middle, as the reference writer patches
    ([(0, 3, b"Z")], b"Z3456789abcdefghij"),  # at the start, fewer bytes inserted than removed
    ([(17, 3, b"TAIL!")], b"0123456789abcdefgTAIL!"),  # the entry's end, more inserted than removed
    ([(20, 0, b"!")], b"0123456789abcdefghij!"),  # after the entry's end, nothing removed
    ([(1, 1, b"A"), (2, 0, b"+"), (3, 4, b"")], b"0A23+456bcdefghij"),  # several, one removing only
    ([(0, 20, b"")], b""),  # all of it removed
    ([], PATCHED_BASE),  # no patch: the entry itself
]


def test_patched_strings_are_their_text_entry_patched(tmp_path: Path) -> None:
    # The u32 after each string is delta-coded: it comes out right only where the patched
    # string's 12 + n bytes were stepped over exactly (§7.1).
    values = [5, 1000, 7, 0xFFFFFFFF, 3, 3, 42]
    rows = [(PATCHED_SITE, _patched_string(7, p), v) for (p, _), v in zip(PATCHES, values)]
    path = _patched_file(tmp_path / "patched.tlog", [rows, rows[::-1]])
    records, problems = read_all(path)
    assert problems == []
    expected = [f"{text.decode()} {v}" for (_, text), v in zip(PATCHES, values)]
    assert [r["message"] for r in records] == expected + expected[::-1]
    _same_as_the_cli(path, records, problems)


MALFORMED_PATCHES = {
    "a patch that neither removes nor inserts": (_patched_string(7, [(3, 0, b"")]), "neither removes nor inserts"),
    "a patch that keeps past the entry's end": (_patched_string(7, [(21, 0, b"x")]), "reach past"),
    "a patch that removes past the entry's end": (_patched_string(7, [(18, 3, b"")]), "reach past"),
    "patches that reach past the entry's end together":
        (_patched_string(7, [(10, 5, b""), (5, 1, b"")]), "reach past"),
    "a patch whose bytes run past the patches' size":
        (_patched_string(7, _varint(0) + _varint(1) + _varint(3) + b"ab"), "do not fill"),
    "patches that end inside a patch's counts": (_patched_string(7, b"\x01\x01"), "do not fill"),
    "a text id the file has not defined": (_patched_string(99, [(0, 1, b"x")]), "text id 99"),
    "a patched string inside a structured value": (_patched_string(7, [(0, 1, b"x")]), "structured value"),
}


@pytest.mark.parametrize("case", list(MALFORMED_PATCHES))
def test_a_malformed_patched_string_is_reported_and_its_record_skipped(case: str, tmp_path: Path) -> None:
    # §8: malformed like an undefined text id, so the record's bytes still split, its deltas
    # count (the u32 after it goes on from its value) and the records after it decode (§7.1).
    string, words = MALFORMED_PATCHES[case]
    structured = case.endswith("structured value")
    bad = (STRUCTURED_SITE, string, None) if structured else (PATCHED_SITE, string, 6)
    good = [(PATCHED_SITE, _plain_string(b"after"), 7), (STRUCTURED_SITE, _plain_string(b"s"), None)]
    path = _patched_file(tmp_path / "malformed.tlog", [[(PATCHED_SITE, _plain_string(b"before"), 5), bad, *good],
                                                       good])
    records, problems = read_all(path)
    assert len(problems) == 1 and words in problems[0].reason, problems
    assert "later records" not in problems[0].reason
    assert [r["message"] for r in records] == ["before 5", "after 7", "s", "after 7", "s"]
    _same_as_the_cli(path, records, problems)


def test_a_patched_string_whose_size_runs_past_its_record_ends_the_chain(tmp_path: Path) -> None:
    # Its 12 + n bytes do not fit the record's args: the bytes do not split, so the site's later
    # records in the frame are reported, not misread (§7.1), and the next frame decodes.
    string = struct.pack("<III", 0xFFFFFFFC, 7, 100) + _varint(0) + _varint(1) + _text(b"x")
    after = (PATCHED_SITE, _plain_string(b"after"), 7)
    path = _patched_file(tmp_path / "overrun.tlog", [[(PATCHED_SITE, string, 6), after], [after]])
    records, problems = read_all(path)
    assert [r["message"] for r in records] == ["after 7"]
    assert len(problems) == 2 and "does not match" in problems[0].reason, problems
    assert "after one that did not match" in problems[1].reason
    _same_as_the_cli(path, records, problems)


def test_a_patched_string_may_not_exceed_2_31_bytes() -> None:
    # No file can make one (§6 keeps a file's texts under 64 MiB, §3 a frame's payload), so the
    # bound is checked on a stand-in entry that claims 2^31 - 1 bytes and holds none.
    class Longest(bytes):
        def __len__(self) -> int:
            return 0x7FFFFFFF

    def patches(*patch: tuple[int, int, bytes]) -> Cursor:
        return Cursor(b"".join(_varint(s) + _varint(r) + _text(i) for s, r, i in patch))

    base = Longest()
    with pytest.raises(Malformed, match="over 2"):
        _patched(base, patches((0x7FFFFFFF, 0, b"x")))  # one byte after all of it
    with pytest.raises(Malformed, match="over 2"):
        _patched(base, patches((0, 0, b"x")))  # one byte before all of it
    assert _patched(base, patches((0, 1, b"x"))) == b"x"  # one byte for one: 2^31 - 1 in all
