"""LogFollower: a growing, truncated, rotated log read like ``tail -f``."""

from __future__ import annotations

import gzip
import os
import random
from pathlib import Path

import pandas as pd
import pytest
import zstandard
from io_logs import (
    daemon_start,
    partition_lines,
    simple_log,
    small_pieces,
    worker_started,
    write,
)

from viewer.io import LogError, open_log
from viewer.io.follow import MIN_INTERVAL_S, LogFollower
from viewer.model import Session

SAMPLES = Path(__file__).resolve().parents[2] / "sample_logs"
SAMPLE = SAMPLES / "phase8_pw10_5sectors.log"


def assert_same_session(a: Session, b: Session) -> None:
    pd.testing.assert_frame_equal(a.partitions.to_pandas(), b.partitions.to_pandas())
    pd.testing.assert_frame_equal(a.jobs.to_pandas(), b.jobs.to_pandas())
    pd.testing.assert_frame_equal(a.workers.to_pandas(), b.workers.to_pandas())
    for name in ("events", "skipped", "start_ms", "end_ms", "kernel_source", "notes"):
        assert getattr(a, name) == getattr(b, name), name


def append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)


def lines_bytes(lines: list[str]) -> bytes:
    return ("\n".join(lines) + "\n").encode()


@pytest.fixture
def follower(tmp_path):
    made: list[LogFollower] = []

    def make(path: Path) -> LogFollower:
        made.append(LogFollower(path))
        return made[-1]

    yield make
    for f in made:
        f.close()


def test_first_poll_reads_all_then_none_without_change(tmp_path, follower):
    path = tmp_path / "run.log"
    write(path, simple_log())
    f = follower(path)
    timeline = f.poll()
    assert timeline is not None and timeline.source == path
    assert_same_session(timeline.sessions[0], open_log(path).sessions[0])
    assert f.poll() is None
    assert f.next_interval() >= MIN_INTERVAL_S


def test_appended_lines_and_partial_last_line(tmp_path, follower):
    data = SAMPLE.read_bytes()
    path = tmp_path / "live.log"
    half = data.index(b"\n", len(data) // 2) + 1
    path.write_bytes(data[:half])
    f = follower(path)
    first = f.poll()
    assert first is not None and f.end == half

    cut = data.index(b"\n", half + 1000) + 1
    torn = cut + 7  # a few bytes of the next line: not read until it is complete
    append(path, data[half:torn])
    grown = f.poll()
    assert grown is not None and f.end == cut
    assert grown.events > first.events
    assert f.poll() is None  # only the torn line is new

    append(path, data[torn:])
    final = f.poll()
    assert final is not None and f.end == len(data)
    whole = open_log(SAMPLE)
    assert final.events == whole.events
    assert_same_session(final.sessions[0], whole.sessions[0])


def test_line_without_newline_is_never_read(tmp_path, follower):
    path = tmp_path / "run.log"
    lines = simple_log(jobs=1, parts=1, noise=False)
    path.write_bytes(lines_bytes(lines[:-1]) + lines[-1].encode())  # GPU_END not ended yet
    f = follower(path)
    timeline = f.poll()
    assert timeline is not None
    assert timeline.sessions[0].open_intervals == 1
    append(path, b"\n")
    assert f.poll().sessions[0].open_intervals == 0


def test_truncation_keeps_earlier_sessions(tmp_path, follower):
    path = tmp_path / "run.log"
    write(path, simple_log(jobs=2))
    f = follower(path)
    before = f.poll()
    with open(path, "r+b") as fh:
        fh.truncate(0)
    assert f.poll() is None
    append(path, lines_bytes(simple_log(jobs=1, t0=50)))
    after = f.poll()
    assert [s.index for s in after.sessions] == [0, 1]
    assert_same_session(after.sessions[0], before.sessions[0])
    assert len(after.sessions[1].jobs) == 1


def test_truncated_and_rewritten_longer_between_polls(tmp_path, follower):
    path = tmp_path / "run.log"
    write(path, simple_log(jobs=1))
    f = follower(path)
    f.poll()
    write(path, simple_log(jobs=3, noise=False))  # larger than before: only the bytes tell
    after = f.poll()
    assert [len(s.jobs) for s in after.sessions] == [1, 3]


def test_rotation_drains_old_file_then_reads_new_one(tmp_path, follower):
    path = tmp_path / "run.log"
    old = simple_log(jobs=2)
    write(path, old[:-4])
    f = follower(path)
    f.poll()
    rotated = tmp_path / "run.log.1"
    os.rename(path, rotated)
    append(rotated, lines_bytes(old[-4:]))  # written after the last poll, before the rename
    drained = f.poll()
    assert drained is not None
    assert_same_session(drained.sessions[0], open_log(rotated).sessions[0])

    new = [daemon_start(), worker_started(0, 0), *partition_lines("job-new", 0, 5, worker=0)]
    write(path, new)
    after = f.poll()
    assert [s.index for s in after.sessions] == [0, 1]
    assert_same_session(after.sessions[0], open_log(rotated).sessions[0])
    assert list(after.sessions[1].jobs["job_id"]) == ["job-new"]
    assert f.poll() is None


def test_new_file_without_timeline_lines_yet_is_waited_for(tmp_path, follower):
    path = tmp_path / "run.log"
    write(path, [daemon_start(), worker_started(0, 0)])
    f = follower(path)
    assert f.poll() is None
    append(path, lines_bytes(partition_lines("job-0", 0, 5, worker=0)))
    timeline = f.poll()
    assert timeline is not None and timeline.events == 6


def test_empty_file_is_waited_for(tmp_path, follower):
    path = tmp_path / "run.log"
    path.touch()
    f = follower(path)
    assert f.poll() is None
    write(path, simple_log(jobs=1))
    assert f.poll() is not None


@pytest.mark.parametrize(
    "compress, kind",
    [(gzip.compress, "gzip"), (lambda b: zstandard.ZstdCompressor().compress(b), "zstd")],
)
def test_compressed_file_cannot_be_followed(tmp_path, follower, compress, kind):
    path = tmp_path / "run.log.gz"
    path.write_bytes(compress(lines_bytes(simple_log())))
    with pytest.raises(LogError, match=f"{kind}-compressed log cannot be followed"):
        follower(path).poll()


def test_binary_file_is_refused(tmp_path, follower):
    path = tmp_path / "core"
    path.write_bytes(b"\x7fELF\x00\x00\x01\n" * 100)
    with pytest.raises(LogError, match="binary"):
        follower(path).poll()


def test_missing_file(tmp_path, follower):
    with pytest.raises(LogError, match="no such file"):
        follower(tmp_path / "nothing.log").poll()


def test_file_is_pinned_when_following_starts(tmp_path, follower):
    path = tmp_path / "run.log"
    write(path, simple_log(jobs=2))
    f = follower(path)
    path.rename(tmp_path / "run.log.1")
    write(path, simple_log(jobs=1, noise=False))
    assert [len(s.jobs) for s in f.poll().sessions] == [2, 1]


@pytest.mark.parametrize("small", [False, True], ids=["chunks", "tiny-chunks"])
@pytest.mark.parametrize(
    "name", sorted(p.name for p in SAMPLES.glob("*.log")) + ["crlf", "cr_only"]
)
def test_incremental_reads_equal_full_reads(tmp_path, follower, monkeypatch, name, small, scanner):
    """Polls at random points (mid-line too) give what ``open_log(end=...)`` gives."""
    if small:  # many pieces, chunks and parse batches per poll, lines carried across them
        small_pieces(monkeypatch, 997, records=50)
    if name in ("crlf", "cr_only"):
        lines = simple_log(jobs=3) + [daemon_start(), *simple_log(jobs=2, t0=7)]
        end = "\r\n" if name == "crlf" else "\r"
        data = (end.join(lines) + end).encode()
    else:
        data = (SAMPLES / name).read_bytes()
    path = tmp_path / name
    path.write_bytes(b"")
    f = follower(path)
    rng = random.Random(name)
    cuts = sorted(rng.sample(range(1, len(data)), 6)) + [len(data)]
    done = 0
    for cut in cuts:
        append(path, data[done:cut])
        done = cut
        timeline = f.poll()
        if timeline is None:
            continue
        whole = open_log(path, end=f.end)
        assert len(timeline.sessions) == len(whole.sessions)
        for a, b in zip(timeline.sessions, whole.sessions, strict=True):
            assert_same_session(a, b)
    assert f.end == max(data.rfind(b"\n"), data.rfind(b"\r")) + 1
