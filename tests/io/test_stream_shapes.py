"""A compressed log with bytes after its stream, and a log saved as UTF-16: the reader says
what they are (issue 27, item 18)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import zstandard
from io_logs import simple_log

from viewer.io import LogError, open_log

TEXT = ("\n".join(simple_log()) + "\n").encode()
COMPRESS = {"gzip": gzip.compress, "zstd": zstandard.compress}


@pytest.mark.parametrize("kind", ["gzip", "zstd"])
@pytest.mark.parametrize("tail", [b"garbage after the stream\n", bytes(1000)])
def test_trailing_bytes_after_a_stream_are_a_note_not_damage(tmp_path, kind, tail) -> None:
    """`gzip -d` says "trailing garbage ignored"; the reader called such a file damaged
    ("fails its check at byte 0 ... the rest of the file is lost") or said nothing."""
    path = tmp_path / ("run.log.gz" if kind == "gzip" else "run.log.zst")
    path.write_bytes(COMPRESS[kind](TEXT) + tail)
    timeline = open_log(path)
    assert timeline.events == open_log_bytes(tmp_path, TEXT).events
    (session,) = timeline.sessions
    assert session.notes == [
        f"{len(tail)} trailing bytes after the {kind} stream ignored (they are no {kind} "
        "data; the stream before them is read whole)"
    ]


def test_a_second_member_is_read_not_called_trailing(tmp_path) -> None:
    """Concatenated gzip members (a rotated log appended to) are one stream."""
    lines = simple_log(jobs=4)
    half = len(lines) // 2
    first, second = ("\n".join(part) + "\n" for part in (lines[:half], lines[half:]))
    path = tmp_path / "run.log.gz"
    path.write_bytes(gzip.compress(first.encode()) + gzip.compress(second.encode()))
    timeline = open_log(path)
    assert timeline.events == open_log_bytes(tmp_path, (first + second).encode()).events
    assert not any(n for s in timeline.sessions for n in s.notes if "trailing" in n)


def open_log_bytes(folder: Path, data: bytes):  # noqa: ANN201
    path = folder / "plain.log"
    path.write_bytes(data)
    return open_log(path)


@pytest.mark.parametrize(
    ("codec", "encoding", "compress"),
    [
        ("UTF-16", "utf-16", False),  # with a byte order mark (PowerShell's `>`)
        ("UTF-16LE", "utf-16-le", False),
        ("UTF-16BE", "utf-16-be", False),
        ("UTF-16", "utf-16", True),
    ],
)
def test_a_utf16_log_is_named_as_such(tmp_path, scanner, codec, encoding, compress) -> None:
    """It was called "binary data"; the message says what it is and how to convert it."""
    data = "\n".join(simple_log()).encode(encoding)
    path = tmp_path / ("run.log.gz" if compress else "run.log")
    path.write_bytes(gzip.compress(data) if compress else data)
    with pytest.raises(LogError) as info:
        open_log(path)
    assert str(info.value) == (
        f"{path}: is {codec} text; cuzk logs are UTF-8 (or ASCII): convert it with "
        f"iconv -f {codec} -t UTF-8"
    )


@pytest.mark.parametrize("start", [b"", b"\xff\xfe"])
def test_binary_data_is_still_binary_data(tmp_path, scanner, start) -> None:
    path = tmp_path / "run.log"
    path.write_bytes(start + bytes(range(256)) * 8)
    with pytest.raises(LogError, match="binary data, not a text log"):
        open_log(path)
