"""Open a log file read-only, decompress it on the fly and cut it into chunks of whole lines.

Compression is sniffed from the magic bytes (a rotated ``.gz`` is often renamed), so
``.gz`` / ``.zst`` / plain text all go through one path; nothing is copied to disk.
"""

from __future__ import annotations

import errno
import os
import stat
import zlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import BinaryIO

import zstandard

from viewer.io.errors import LogError
from viewer.io.records import SCAN_RE, last_line_end, line_end

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_DECOMPRESSORS = {
    "gzip": lambda: zlib.decompressobj(wbits=16 + zlib.MAX_WBITS),
    "zstd": lambda: zstandard.ZstdDecompressor().decompressobj(),
}
# 1 MB reads stay in the CPU cache and reuse the allocator's memory: 4x faster than
# 32 MB reads on the machines we measured.
CHUNK_BYTES = 1 << 20
#: Compressed bytes decompressed at once: damage loses at most this much before it.
FEED_BYTES = 8 << 10
#: Decompressed bytes handed on at once (a 1 MB read of a noisy log's .gz held 10 MB
#: decompressed, twice: 52 MB at the peak of reading it).
OUT_BYTES = 1 << 20
#: A "line" this long or longer (binary junk without line ends) is skipped whole, never
#: cut into pieces that could read as records with cut numbers.
MAX_LINE = 64 << 20

#: (buffer, start, end): ``buffer[start:end]`` holds whole lines.
Chunk = tuple[bytes, int, int]


@dataclass(frozen=True)
class Skip:
    """A line ``whole_lines`` dropped, counted under ``reason`` (``Session.skipped``) at its
    place among the records."""

    reason: str


OVERSIZED = Skip("oversized_line")
CUT = Skip("cut_line")


def whole_lines(blocks: Iterable[bytes], cut: Callable[[], bool]) -> Iterator[Chunk | Skip]:
    """``blocks`` of a byte stream as chunks of whole lines (a line ends at LF, CR or CRLF).

    A line of MAX_LINE bytes or more is dropped whole (``OVERSIZED``).  The last line, when
    no line end follows it, is a line, unless ``cut()`` says the stream stopped inside it
    (a truncated .gz, a file that shrank): then it is dropped, counted as ``CUT`` when it
    holds one of our records.  ``_cscan.scan_file`` cuts a file the same way.  The start of
    a line is held as a list of blocks, joined once its end comes; from LONG_CARRY bytes on
    as one bytearray that grows in place (joining 50 MB of blocks held the line twice), and
    that chunk's buffer is then that bytearray.
    """
    carry: list[bytes] | bytearray = []  # the start of a line: no line end in it
    held = 0  # its length
    skipping = False  # inside an oversized line: dropped up to its end
    for block in _at_most(blocks, MAX_LINE):
        if skipping:
            k = line_end(block, 0, len(block))
            if k < 0:
                continue
            block, skipping = block[k + 1 :], False
        first = line_end(block, 0, len(block))
        if first < 0 or held + first >= MAX_LINE:  # the line goes on, or is too long
            if held + (len(block) if first < 0 else first) >= MAX_LINE:
                yield OVERSIZED
                carry, held = [], 0
                if first < 0:
                    skipping = True
                    continue
                block = block[first + 1 :]
                first = line_end(block, 0, len(block))
            if first < 0:
                carry = _held(carry, block, held)
                held += len(block)
                continue
        data = _whole(carry, block)
        carry = block = []  # type: ignore[assignment]  # a long line's blocks go now
        last = last_line_end(data, held + first, len(data))
        yield data, 0, last + 1
        carry = [data[last + 1 :]] if last + 1 < len(data) else []
        held = len(data) - last - 1
        del data  # not held while the next long line is gathered and joined
    if carry and not cut():
        tail = _whole(carry)
        yield tail, 0, len(tail)
    elif carry and SCAN_RE.search(_whole(carry)):
        yield CUT


#: A line's start held from this many bytes on is one growing bytearray, not a list.
LONG_CARRY = 4 << 20


def _whole(carry: list[bytes] | bytearray, block: bytes = b"") -> bytes | bytearray:
    """The held start of a line with ``block`` after it, as one buffer (a grown bytearray is
    that buffer itself)."""
    if isinstance(carry, bytearray):
        carry += block
        return carry
    return b"".join([*carry, block]) if carry else block


def _held(carry: list[bytes] | bytearray, block: bytes, held: int) -> list[bytes] | bytearray:
    """``carry`` with ``block`` after it (``held``: its length so far)."""
    if isinstance(carry, bytearray):
        return _whole(carry, block)
    carry.append(block)
    if held + len(block) < LONG_CARRY:
        return carry
    grown = bytearray()
    for part in carry:
        grown += part
    carry.clear()  # the blocks go once copied: LONG_CARRY bytes twice, never the line
    return grown


def _at_most(blocks: Iterable[bytes], size: int) -> Iterator[bytes]:
    """``blocks``, the longer ones cut in pieces of ``size`` (a line inside one block
    must be shorter than MAX_LINE, or its length would go unchecked)."""
    for block in blocks:
        if len(block) <= size:
            yield block
        else:
            yield from (block[i : i + size] for i in range(0, len(block), size))


def log_path(path: str | bytes | PathLike) -> Path:
    """``path`` (str, bytes or path-like) as a Path; ``LogError`` for a name that is not
    valid UTF-8, which no report, window title or sidecar file could show."""
    name = os.fsdecode(path)
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(name).decode("utf-8", "backslashreplace")
        raise LogError(
            f"{shown}: the file name is not valid UTF-8; rename the file to open it"
        ) from None
    return Path(name)


#: What a path that is no regular file names, by ``stat`` test.
NOT_REGULAR = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (a pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def open_regular(path: Path) -> BinaryIO:
    """``path`` opened read-only, unbuffered; ``LogError`` naming the file and the problem
    unless it is a regular file (or a symlink to one).  Nothing else is opened for reading:
    a FIFO blocks until someone writes, a device or a socket is no log."""
    try:
        _check_regular(path, os.stat(path).st_mode)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO swapped in never blocks
    except OSError as exc:
        raise unreadable(path, exc) from None
    try:
        _check_regular(path, os.fstat(fd).st_mode)  # the path changed since the stat
    except LogError:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb", buffering=0)


def unreadable(path: Path, exc: OSError) -> LogError:
    """The error naming why ``path`` could not be opened or stat'ed."""
    if isinstance(exc, FileNotFoundError):
        return LogError(f"{path}: {missing(path)}")
    if exc.errno == errno.ELOOP:
        return LogError(f"{path}: is a symbolic link loop (it never reaches a file)")
    return LogError(f"{path}: cannot be read ({exc.strerror or exc})")


def missing(path: Path) -> str:
    """Why ``path`` names no file: it does not exist, or it is a dangling symbolic link."""
    try:
        target = os.readlink(path)
    except OSError:
        return "no such file"
    return f"is a symbolic link to {target}, which does not exist"


def _check_regular(path: Path, mode: int) -> None:
    if stat.S_ISREG(mode):
        return
    what = next((name for test, name in NOT_REGULAR if test(mode)), "no regular file")
    raise LogError(f"{path}: is {what}, not a regular file; expected a cuzk daemon log file")


def _damage(compression: str, done: int, total: int, exc: Exception) -> str:
    """What went wrong in a compressed stream, said as it is: a failed check (gzip's CRC,
    a zstd checksum) comes at the end of the data it covers, so the damage lies somewhere
    in what was read; any other error comes soon after the damage."""
    what = "gzip" if compression == "gzip" else "zstd"
    if "check" in str(exc):
        return (
            f"the {what} data fails its check at byte {done} of {total} ({exc}): it is "
            "damaged somewhere before, and lines read from it may be wrong"
        )
    return f"the {what} data is damaged after byte {done} of {total} ({exc})"


class Source:
    """A read-only byte stream over a possibly compressed file, with progress in file bytes."""

    def __init__(self, path: Path, end: int | None = None) -> None:
        self.path = path
        self.name = path.name
        self._raw = open_regular(path)
        self.total = os.fstat(self._raw.fileno()).st_size
        if self.total == 0:
            self._raw.close()
            raise LogError(f"{path}: the file is empty; expected a cuzk daemon log")
        magic = self._raw.read(4)
        self._raw.seek(0)
        self.compression = "plain"
        if magic.startswith(GZIP_MAGIC):
            self.compression = "gzip"
        elif magic == ZSTD_MAGIC:
            self.compression = "zstd"
        self.truncated = False  # set when a compressed stream ends early
        self.damage = ""  # why a compressed stream could not be read on, and where
        self.trailing = 0  # bytes after the last whole gzip member / zstd frame, not one
        # Plain files stop at ``end`` (a file still being written); compressed ones ignore it.
        if end is not None and self.compression == "plain":
            self.total = max(0, min(end, self.total))

    def position(self) -> int:
        """Bytes of the file consumed so far (compressed bytes for .gz / .zst)."""
        try:
            return min(self._raw.tell(), self.total)
        except (OSError, ValueError):
            return self.total

    def fileno(self) -> int:
        return self._raw.fileno()

    def mark_read(self) -> None:
        """The whole range was read by other means (``pread``): say so in ``position``."""
        self._raw.seek(self.total)

    def _blocks(self, size: int) -> Iterator[bytes]:
        """The decompressed stream in pieces of about ``size`` input bytes."""
        read = self._raw.read
        if self.compression == "plain":
            left = self.total
            while left > 0 and (data := read(min(size, left))):
                left -= len(data)
                yield data
            return
        make = _DECOMPRESSORS[self.compression]
        d = make()
        gzip = self.compression == "gzip"
        done = 0  # compressed bytes decompressed without error
        out: list[bytes] = []  # decompressed, not yet handed on
        held = 0  # its length
        ended = None  # the file offset where the last whole member / frame ended
        begun = False  # the member / frame being read gave some output
        offset = 0  # the file offset of ``data``
        try:
            while data := read(size):
                # Fed in pieces: what comes before a damaged piece is kept.
                for at in range(0, len(data), FEED_BYTES):
                    piece = data[at : at + FEED_BYTES]
                    here = offset + at  # the file offset of ``piece``
                    more = False  # output held back by the cap, with no input left
                    while piece or more:
                        if d.eof:  # the member / frame before ended: the next begins here
                            d, begun = make(), False  # (also when it ended with the feed before)
                        if gzip:  # at most OUT_BYTES at once: a bomb is read in pieces too
                            got = d.decompress(piece, OUT_BYTES)
                            rest = d.unconsumed_tail
                            more = len(got) == OUT_BYTES and not d.eof
                        else:
                            got, rest = d.decompress(piece), b""
                        if d.eof:
                            rest = d.unused_data
                            ended = here + len(piece) - len(rest)
                        here += len(piece) - len(rest)
                        piece, begun = rest, begun or bool(got)
                        out.append(got)
                        held += len(got)
                        if held >= OUT_BYTES:  # handed on decompressed a megabyte at a time
                            yield b"".join(out)
                            out, held = [], 0
                    done += min(FEED_BYTES, len(data) - at)
                offset += len(data)
            if joined := b"".join(out):
                yield joined
        except (zlib.error, zstandard.ZstdError, EOFError) as exc:
            if joined := b"".join(out):
                yield joined
            if ended is not None and not begun:  # no member / frame follows the last one:
                self.trailing = self.total - ended  # trailing bytes, as gzip -d says
                return
            self.truncated = True  # damaged: keep what was read
            self.damage = _damage(self.compression, done, self.total, exc)
            return
        if not d.eof:
            self.truncated = True  # a rotated file still being written, or a cut copy

    def chunks(self, size: int | None = None) -> Iterator[Chunk | Skip]:
        """Chunks of whole lines (see ``whole_lines``); a compressed stream that ends early
        loses its cut last line."""
        return whole_lines(self._blocks(size or CHUNK_BYTES), lambda: self.truncated)

    def close(self) -> None:
        self._raw.close()

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def checked(
    chunks: Iterator[Chunk | Skip],
    source: Source,
    progress: Callable[[int, int], None] | None,
    cancel: Callable[[], bool] | None,
) -> Iterator[Chunk | Skip]:
    """``chunks`` with a progress report and a cancel check after every chunk."""
    from viewer.io.errors import LoadCancelled

    for chunk in chunks:
        if cancel is not None and cancel():
            raise LoadCancelled(f"{source.path}: loading cancelled")
        yield chunk
        if progress is not None:
            progress(source.position(), source.total)
