"""Inputs that must not make the reader lie, hang or crash (issue 13): each is read by both
scanners with the same result, and what cannot be read is counted or refused by name."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from io_logs import partition_lines, simple_log, write

from viewer.io import LogError, open_log, pure
from viewer.io.follow import LogFollower

DATA = Path(__file__).with_name("data")


def test_numbers_over_int32_are_bad_numbers(scanner):
    """worker=4294967296 wrapped to worker 0, partition=4294967298 to partition 2: such
    lines are skipped as bad numbers, as is a 17-digit offset; 2^31 - 1 still fits."""
    (s,) = open_log(DATA / "numbers_over_int32.log").sessions
    assert s.skipped == {"bad_number": 6} and s.events == 10
    calls = s.partitions.assign(job_id=s.job_ids()).to_pandas().set_index(["job_id", "partition"])
    assert sorted(calls.index) == [("job-a", 0), ("job-b", 1), ("job-c", 2**31 - 1)]
    assert calls.loc[("job-a", 0), "worker"] == 0
    assert (
        np.isnan(calls.loc[("job-b", 1), "gpu_start"]) and calls.loc[("job-b", 1), "worker"] == -1
    )
    assert calls.loc[("job-c", 2**31 - 1), "worker"] == 2**31 - 1
    assert set(s.workers["worker"]) == {0, 2**31 - 1}


def test_gpu_end_before_its_start_is_dropped():
    """A GPU_END whose offset is below its call's GPU_START would make the call's time
    negative: it is dropped and counted, and the call stays open (as after a crash)."""
    (s,) = open_log(DATA / "gpu_end_before_start.log").sessions
    assert s.skipped == {"gpu_end_before_start": 1} and s.events == 11
    row = s.partitions.to_pandas().set_index("partition").loc[1]
    assert row.gpu_open and np.isnan(row.gpu_end) and np.isnan(row.gpu_ms)
    ended = s.partitions[np.isfinite(s.partitions["gpu_end"])]
    assert (ended["gpu_end"] >= ended["gpu_start"]).all() and len(ended) == 1
    assert s.end_ms == 605  # the dropped line's offset is no event of the session


def test_a_gz_cut_inside_a_number_does_not_read_the_cut_number():
    """The stream stops at "gpu_ms=12" of "gpu_ms=1234": that line is skipped, not read."""
    (s,) = open_log(DATA / "gz_cut_inside_a_number.log.gz").sessions
    assert s.skipped == {"cut_line": 1} and s.events == 11
    assert any("cut short" in n for n in s.notes)
    row = s.partitions.to_pandas().set_index("partition").loc[1]
    assert row.gpu_open and np.isnan(row.gpu_ms)


def test_a_gz_cut_at_a_line_end_loses_nothing(tmp_path):
    blob = gzip.compress(("\n".join(simple_log()) + "\n").encode())
    path = tmp_path / "run.log.gz"
    path.write_bytes(blob[:-4])  # the trailer (size) cut off: the lines are whole
    (s,) = open_log(path).sessions
    assert s.events == 36 and s.skipped == {}
    assert any("cut short" in n for n in s.notes)


def test_a_gzip_bomb_is_decompressed_a_megabyte_at_a_time(tmp_path):
    """110 MB of one event in a 0.3 MB .gz, then a second gzip member: the stream is handed
    on at most ``source.OUT_BYTES`` at a time (a 1 MB read once held all it decompressed to,
    twice), every byte of both members is read, and the log reads as its text does."""
    from viewer.io import source

    line = b"TIMELINE,7,SYNTH_START,job-a,partition=0\n"
    rest = ("\n".join(simple_log()) + "\n").encode()
    path = tmp_path / "bomb.log.gz"
    path.write_bytes(gzip.compress(line * 2_700_000, 9) + gzip.compress(rest))
    assert path.stat().st_size < 1_000_000
    with source.Source(path) as src:
        sizes = [len(block) for block in src._blocks(source.CHUNK_BYTES)]
    assert max(sizes) <= source.OUT_BYTES + source.FEED_BYTES * 1100  # one feed's output more
    assert sum(sizes) == len(line) * 2_700_000 + len(rest)
    plain = tmp_path / "bomb.log"
    plain.write_bytes(line * 2_700_000 + rest)
    got, want = open_log(path).sessions, open_log(plain).sessions
    assert [(s.skipped, s.events) for s in got] == [(s.skipped, s.events) for s in want]
    assert all(a.partitions.equals(b.partitions) for a, b in zip(got, want, strict=True))
    assert got[0].skipped == {"duplicate_event": 2_699_999}


def oversized(filler: int) -> tuple[bytes, list[str]]:
    """A log with one "line" of ``filler`` junk bytes holding a TIMELINE record, no newline
    until the record's end, then ordinary lines."""
    before = partition_lines("job-a", 0, 100, 0)
    after = partition_lines("job-a", 1, 700, 1)
    junk = b"x" * filler + b" TIMELINE,650,GPU_END,job-a,worker=0,partition=0,gpu_ms=1234"
    data = (
        ("\n".join(before[:5]) + "\n").encode() + junk + ("\n" + "\n".join(after) + "\n").encode()
    )
    return data, before


@pytest.mark.parametrize("compression", ["plain", "gz"])
def test_a_line_over_max_line_is_skipped_whole(tmp_path, monkeypatch, scanner, compression):
    """A line longer than MAX_LINE was cut at the limit, and the record inside it read
    with a cut number: the whole line is skipped now, and counted once."""
    from viewer.io import source

    monkeypatch.setattr(source, "MAX_LINE", 1000)
    monkeypatch.setattr(source, "CHUNK_BYTES", 97)
    monkeypatch.setattr(pure, "READ_BYTES", 97)
    for filler in (900, 960, 3000):  # the line is 961, 1021, 3061 bytes long
        data, _ = oversized(filler)
        path = tmp_path / f"long.log{'.gz' if compression == 'gz' else ''}"
        path.write_bytes(gzip.compress(data) if compression == "gz" else data)
        (s,) = open_log(path).sessions
        row = s.partitions.to_pandas().set_index("partition").loc[0]
        if filler == 900:  # shorter than MAX_LINE: the record glued to the junk is read
            assert s.skipped == {} and s.events == 12 and row.gpu_ms == 1234
        else:
            assert s.skipped == {"oversized_line": 1} and s.events == 11, filler
            assert row.gpu_open and np.isnan(row.gpu_ms)


def test_a_line_of_exactly_max_line_bytes_is_skipped(tmp_path, monkeypatch, scanner):
    from viewer.io import source

    monkeypatch.setattr(source, "MAX_LINE", 200)
    line = b"TIMELINE,1,SYNTH_START,j,partition=0,pad="
    for size, skipped, events in ((199, {}, 3), (200, {"oversized_line": 1}, 2)):
        path = tmp_path / "edge.log"
        path.write_bytes(
            b"TIMELINE,0,SYNTH_START,k,partition=0\n"
            + line
            + b"k" * (size - len(line))
            + b"\nTIMELINE,2,SYNTH_START,k,partition=1\n"
        )
        (s,) = open_log(path).sessions
        assert s.skipped == skipped and s.events == events, size


def test_a_real_64mb_line_is_skipped(tmp_path, scanner):
    """The limit itself, once: 64 MB of junk, then a record in the same line."""
    data, _ = oversized(64 << 20)
    path = tmp_path / "long.log"
    path.write_bytes(data)
    (s,) = open_log(path).sessions
    assert s.skipped == {"oversized_line": 1} and s.events == 11


def test_cr_only_line_ends(scanner):
    """Old Mac line ends: a lone CR ends a line (97 of these 300 events were lost)."""
    (s,) = open_log(DATA / "cr_only_line_ends.log").sessions
    assert s.events == 300 and s.skipped == {}
    assert s.gpus == {0: [0, 1]}  # the worker-started lines are read too


@pytest.mark.parametrize("ends", ["\r", "\r\n", "\n", "\r\r\n"])
def test_every_line_end_reads_the_same(tmp_path, scanner, ends):
    want = open_log(_write(tmp_path / "lf.log", simple_log(), "\n")).sessions[0]
    got = open_log(_write(tmp_path / "x.log", simple_log(), ends)).sessions[0]
    assert got.partitions.equals(want.partitions) and got.skipped == want.skipped == {}


def _write(path: Path, lines: list[str], end: str) -> Path:
    write(path, lines, end)
    return path


def test_share_of_skipped_timeline_lines(tmp_path):
    lines = simple_log(jobs=2, parts=3)  # 36 events
    lines += ["TIMELINE,9x,GPU_END,j,worker=0,partition=0", "CUZK_TIMING: pre_lock_cpu_ms=x"]
    tl = open_log(_write(tmp_path / "run.log", lines, "\n"))
    (s,) = tl.sessions
    assert s.skipped == {"bad_number": 1, "malformed_cuzk_timing": 1}
    assert s.skipped_timeline_lines == 1  # CUZK_TIMING lines are no TIMELINE lines
    assert s.skipped_share() == pytest.approx(1 / 37)
    assert tl.skipped_share() == pytest.approx(1 / 37) and tl.skipped_share() > 0.01
    clean = open_log(_write(tmp_path / "clean.log", simple_log(), "\n"))
    assert clean.skipped_share() == 0.0


# ------------------------------------------------------------------ not regular files


@pytest.fixture(autouse=True)
def no_hang():
    """A FIFO blocked the reader forever: make such a regression fail, not hang the run."""
    import signal

    def hung(*_):
        raise TimeoutError("the reader hung")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def _fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.log"
    os.mkfifo(path)
    return path


def _socket(tmp_path: Path) -> Path:
    path = tmp_path / "sock.log"
    s = socket.socket(socket.AF_UNIX)
    s.bind(str(path))
    s.close()
    return path


@pytest.mark.parametrize(
    ("make", "problem"),
    [
        (_fifo, "a FIFO"),
        (_socket, "a socket"),
        (lambda _: Path("/dev/null"), "a character device"),
        (lambda _: Path("/dev/zero"), "a character device"),  # it said "the file is empty"
        (lambda p: p, "a directory"),
    ],
)
def test_not_a_regular_file_is_refused(tmp_path, make, problem):
    """A FIFO hung the reader forever (nothing writes to it); devices and sockets are no
    logs either.  Refused before anything is read, by name, in open_log and Follow."""
    path = make(tmp_path)
    with pytest.raises(LogError, match=problem) as info:
        open_log(path)
    assert str(path) in str(info.value)
    link = tmp_path / "link.log"
    link.symlink_to(path)
    with pytest.raises(LogError, match=problem):
        open_log(link)
    with pytest.raises(LogError, match=problem):
        LogFollower(path).poll()


def test_a_symlink_to_a_log_is_read(tmp_path):
    target = _write(tmp_path / "run.log", simple_log(), "\n")
    link = tmp_path / "link.log"
    link.symlink_to(target)
    assert open_log(link).events == 36
    follower = LogFollower(link)
    try:
        assert follower.poll().events == 36
    finally:
        follower.close()


def test_stdin_as_a_pipe_is_refused_not_waited_on():
    """``python -m viewer info /dev/stdin`` with a pipe that nobody writes to used to hang;
    the timeout only guards the test run."""
    code = "from viewer.io import open_log; open_log('/dev/stdin')"
    proc = subprocess.run(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, capture_output=True, timeout=60
    )
    assert proc.returncode != 0
    assert b"LogError: /dev/stdin: is a FIFO" in proc.stderr


def test_a_file_name_that_is_not_utf8_is_a_clear_log_error(tmp_path):
    """Such a name (bytes, or str with surrogate escapes from the command line) cannot be
    shown or written to a report: refused with a printable message, never a traceback."""
    raw = os.fsencode(tmp_path) + b"/run\xff.log"
    write(Path(os.fsdecode(raw)), simple_log())
    for path in (raw, os.fsdecode(raw), Path(os.fsdecode(raw))):
        with pytest.raises(LogError, match="not valid UTF-8") as info:
            open_log(path)
        assert "run\\xff.log" in str(info.value)
        str(info.value).encode("utf-8")  # printable
    with pytest.raises(LogError, match="not valid UTF-8"):
        LogFollower(raw).poll()


def test_a_bytes_path_in_utf8_is_read(tmp_path):
    path = _write(tmp_path / "run-é.log", simple_log(), "\n")
    assert open_log(os.fsencode(path)).events == 36


# ------------------------------------------------------------------ honest messages


def test_a_symbolic_link_loop_says_so(tmp_path):
    """A loop of links said "no such file"; a link to nothing names what it points to."""
    (tmp_path / "a.log").symlink_to(tmp_path / "b.log")
    (tmp_path / "b.log").symlink_to(tmp_path / "a.log")
    (tmp_path / "gone.log").symlink_to(tmp_path / "rotated-away.log")
    for reader in (open_log, lambda p: LogFollower(p).poll()):
        with pytest.raises(LogError, match="a.log: is a symbolic link loop"):
            reader(tmp_path / "a.log")
        with pytest.raises(LogError, match="gone.log: is a symbolic link to .*rotated-away.log"):
            reader(tmp_path / "gone.log")


def damaged(kind: str, at: float, lines: list[str]) -> bytes:
    """``lines`` compressed as ``kind``, with 64 bytes zeroed ``at`` of the way in (past
    the 12 bytes of the header and magic)."""
    import zstandard

    text = ("\n".join(lines) + "\n").encode()
    blob = bytearray(gzip.compress(text) if kind == "gz" else zstandard.compress(text))
    cut = max(12, int(len(blob) * at))
    blob[cut : cut + 64] = bytes(64)
    return bytes(blob)


@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_damaged_compressed_data_is_named(tmp_path, kind):
    """Corrupt .gz and .zst files said "no TIMELINE lines": the message names the damage;
    what comes before damage further in is read, and the note says the rest is lost."""
    path = tmp_path / f"run.log.{kind}"
    path.write_bytes(damaged(kind, 0.0, simple_log()))
    with pytest.raises(LogError, match=f"run.log.{kind}: the {'gzip' if kind == 'gz' else 'zstd'}"
                       " data is damaged after byte 0 of") as info:  # fmt: skip
        open_log(path)
    assert "no TIMELINE lines" not in str(info.value)
    rng = np.random.default_rng(1)  # text that compresses little: the damage is far in
    lines = [x for line in simple_log(jobs=60) for x in (line, rng.bytes(40).hex())]
    path.write_bytes(damaged(kind, 0.8, lines))
    tl = open_log(path)
    assert 0 < tl.events < 60 * 18
    (note,) = [n for n in tl.sessions[-1].notes if "damaged" in n]
    assert note.endswith("the rest of the file is lost") and "cut short" not in note
    # gzip's check (a CRC of the whole member) fails only at its end: said so
    assert ("lines read from it may be wrong" in note) == (kind == "gz")


def test_a_file_of_one_oversized_line_says_so(tmp_path, monkeypatch, scanner):
    """Records glued into one line over MAX_LINE (200 MB in the issue): it said "1 TIMELINE
    lines found", though what the skipped line holds is unknown."""
    from viewer.io import source

    monkeypatch.setattr(source, "MAX_LINE", 1000)
    path = tmp_path / "glued.log"
    path.write_text("TIMELINE,5,GPU_START,j,worker=0,partition=0" * 100 + "\n")
    with pytest.raises(
        LogError, match="no TIMELINE line could be read; 1 line.s. of 1000 bytes or more"
    ):
        open_log(path)


@pytest.mark.parametrize("kind", ["gz", "zst"])
def test_a_frame_ending_where_a_feed_ends_is_not_damage(tmp_path, monkeypatch, kind):
    """A .zst of several frames (or a .gz of several members) whose first ends exactly
    where a feed to the decompressor ends: the next frame is read by a new decompressor,
    not fed to the finished one (which lost the rest of the file as damage)."""
    import zstandard

    from viewer.io import source

    lines = simple_log(jobs=4)
    first, second = ("\n".join(lines[:20]) + "\n").encode(), ("\n".join(lines[20:]) + "\n").encode()
    if kind == "gz":
        frames = [gzip.compress(first), gzip.compress(second)]
    else:
        frames = [zstandard.ZstdCompressor().compress(part) for part in (first, second)]
    path = tmp_path / f"run.log.{kind}"
    path.write_bytes(b"".join(frames))
    monkeypatch.setattr(source, "FEED_BYTES", len(frames[0]))
    plain = tmp_path / "run.log"
    plain.write_bytes(first + second)
    got, want = open_log(path).sessions, open_log(plain).sessions
    assert [(s.events, s.skipped, s.notes) for s in got] == [
        (s.events, s.skipped, s.notes) for s in want
    ]
