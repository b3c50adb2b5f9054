"""Find the records and the marker lines in a chunk of whole lines (the pure-Python way;
the compiled scanner finds the same ones, with the same ordinals).

``find_records`` runs one compiled regex per chunk: its literal ``TIM`` prefix is searched
in C and each match is one line's records, in file order.  Records are numbered by their
ordinal (``seq = ordinal << SEQ_SHIFT``), not their byte position, so nothing is done per
line in Python.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from viewer.io.grammar import CZ, CZ_TEXT, MARKERS, TL

#: One regex for both kinds of records (grammar.TL, grammar.CZ): the literal prefix keeps the
#: C search fast.  A line ends at LF, CR (old Mac files) or CRLF.  A match runs from the
#: line's first record to the line end; ``records`` cuts it where a torn write glued more
#: records to it.
SCAN_RE = re.compile(
    re.escape(TL[:3])
    + b"(?:"
    + re.escape(TL[3:])
    + b"|(?<="
    + re.escape(CZ[: len(CZ) - len(CZ_TEXT) + 3])
    + b")"
    + re.escape(CZ_TEXT[3:])
    + rb")[^\r\n]*"
)
#: Where a record starts: a ``CUZK_TIMING:`` record's text starts at ``TIMING:``, but the
#: record before it ends before ``CUZK_``.
RECORD_RE = re.compile(re.escape(TL) + b"|" + re.escape(CZ))
EOL_RE = re.compile(rb"[\r\n]")

#: ``seq`` of a record = its ordinal << SEQ_SHIFT; a line skipped or marker found before
#: record k sorts at (k << SEQ_SHIFT) - 1.
SEQ_SHIFT = 20


def line_end(buf: bytes, pos: int, end: int) -> int:
    """Index of the first CR or LF in ``buf[pos:end]``, or -1."""
    m = EOL_RE.search(buf, pos, end)
    return m.start() if m else -1


def last_line_end(buf: bytes, pos: int, end: int) -> int:
    """Index of the last CR or LF in ``buf[pos:end]``, or -1 (LF first: it is near the end
    of any chunk of a usual log, and only what follows it is searched for a CR)."""
    lf = buf.rfind(b"\n", pos, end)
    return max(lf, buf.rfind(b"\r", max(lf + 1, pos), end))


def job_codes(ids: Iterable[bytes], jobs: dict[str, int]) -> list[int]:
    """The global codes of job ids (as read), numbering new ones in order of appearance.

    ``jobs`` is keyed by the ids as text (undecodable bytes kept apart by
    ``surrogateescape``, so distinct ids stay distinct): the tables' ``job_id`` column
    shares those strings (``job_names``), and no bytes copy of 1.5 M job ids is held
    beside them (issue 27, item 9)."""
    return [jobs.setdefault(j.decode("utf-8", "surrogateescape"), len(jobs)) for j in ids]


def job_names(jobs: dict[str, int]) -> list[str]:
    """The job ids of ``jobs`` in code order, as shown (undecodable bytes as U+FFFD):
    the keys themselves but for those that hold undecodable bytes."""
    return [j if j.isascii() else _shown(j) for j in jobs]


def _shown(job: str) -> str:
    return job.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class Ordinals:
    """The record ordinals used so far in a file (``seq = ordinal << SEQ_SHIFT``)."""

    def __init__(self, base: int = 0) -> None:
        self.base = base


@dataclass
class RawBatch:
    """What ``find_records`` collected: records from ordinal ``base`` on, and markers."""

    base: int = 0
    items: list[bytes] = field(default_factory=list)  # "TIMELINE,..." / "TIMING: ..." records
    markers: list[tuple[int, int, bytes]] = field(default_factory=list)  # (seq, kind, text)


#: Records of glued lines cut between two calls of ``find_records``' ``flush``.
FLUSH_RECORDS = 1 << 14


def records(
    buf: bytes,
    start: int,
    end: int,
    out: list[bytes] | None = None,
    flush: Callable[[], None] | None = None,
) -> list[bytes]:
    """The records of the whole lines ``buf[start:end]``, in order: each ``TIMELINE,`` or
    ``CUZK_TIMING:`` starts one, which runs to the next one on its line or to the line end
    (a torn write glues records into one line).  They are appended to ``out`` (a new list
    by default); ``flush()`` is called every FLUSH_RECORDS records cut from glued lines, to
    take records from ``out`` while a long line is still being cut."""
    out = [] if out is None else out
    if not _long_lines(buf, start, end):  # else findall would copy each long line whole
        found = SCAN_RE.findall(buf, start, end)
        if buf.count(TL, start, end) + buf.count(CZ, start, end) == len(found):
            out += found  # one record per line: nothing glued
            return out
        del found
    cut = 0
    for line in SCAN_RE.finditer(buf, start, end):
        at, stop = line.span()
        for m in RECORD_RE.finditer(buf, at + 1, stop):
            out.append(bytes(buf[at : m.start()]))
            at = m.start() + (len(CZ) - len(CZ_TEXT)) * (m[0] == CZ)
            cut += 1
            if flush is not None and cut >= FLUSH_RECORDS:
                flush()
                cut = 0
        out.append(bytes(buf[at:stop]))
    return out


#: Chunks whose lines are this long on average are cut record by record at once.
LONG_LINE = 1 << 16


def _long_lines(buf: bytes, start: int, end: int) -> bool:
    """Whether ``buf[start:end]`` holds lines of LONG_LINE bytes on average (a log's lines
    are ~100 bytes; a line of glued records may be 50 MB)."""
    size = end - start
    return size >= LONG_LINE and size >= LONG_LINE * (
        buf.count(b"\n", start, end) + buf.count(b"\r", start, end) + 1
    )


def find_records(
    buf: bytes, start: int, end: int, out: RawBatch, flush: Callable[[], None] | None = None
) -> None:
    """Append the records of ``buf[start:end]`` (whole lines) to ``out``, and the marker
    lines (one of each kind per line), each placed before its line's records.  ``flush()``
    may take records (and the markers before them) from ``out`` as it fills: a 50 MB line
    of glued records held 0.6 M records at once, 70 MB beside the line."""
    items = out.items
    # Two long needles are found at bytes.find speed; one short probe common to both
    # (" start") would be slower than the pair.
    first = [buf.find(m.words, start, end) for m in MARKERS]
    if all(p < 0 for p in first):
        records(buf, start, end, items, flush)
        return
    found: list[tuple[int, int, bytes]] = []
    for marker, p in zip(MARKERS, first, strict=True):
        while p >= 0:
            e = line_end(buf, p, end)
            e = end if e < 0 else e
            found.append((p, marker.code, bytes(buf[p + len(marker.words) : e])))
            p = buf.find(marker.words, e, end)
    pos = start
    for p, kind, text in sorted(found):
        line = last_line_end(buf, start, p) + 1 or start
        if line > pos:  # the lines before the marker's line, so the marker sorts after them
            records(buf, pos, line, items, flush)
            pos = line
        out.markers.append((((out.base + len(items)) << SEQ_SHIFT) - 1, kind, text))
    records(buf, pos, end, items, flush)
