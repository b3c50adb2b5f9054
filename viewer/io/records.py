"""Find the records and the marker lines in a chunk of whole lines (the pure-Python way;
the compiled scanner finds the same ones, with the same ordinals).

``find_records`` runs one compiled regex per chunk: its literal ``TIM`` prefix is searched
in C and each match is one line's records, in file order.  Records are numbered by their
ordinal (``seq = ordinal << SEQ_SHIFT``), not their byte position, so nothing is done per
line in Python.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

import numpy as np

from viewer.io.grammar import CZ, CZ_TEXT, MARKERS, TL
from viewer.io.index import Index
from viewer.model.keys import TEXT, text_array, unique

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


def job_codes(ids: Iterable[bytes], jobs: JobIds) -> list[int]:
    """The global codes of job ids (as read), numbering new ones in order of appearance.

    The ids are kept as text (undecodable bytes kept apart by ``surrogateescape``, so
    distinct ids stay distinct), and no bytes copy of 1.5 M job ids is held beside them
    (issue 27, item 9)."""
    return jobs.codes(ids)


def job_names(jobs: JobIds) -> np.ndarray:
    """The job ids of ``jobs`` in code order, as shown (undecodable bytes as U+FFFD)."""
    return jobs.names()


def _shown(job: str) -> str:
    return job.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


#: The hash a job id's text is indexed by (a test swaps in one that collides).
_hash = hash
#: New ids gathered as str before they are made one text array: a piece brings ~2400 new
#: ids on a dense log, a followed log's poll one (an array each was 470 bytes an id).
CHUNK = 4096


class JobIds:
    """Job ids -> global codes in order of first appearance, and the ids in code order:
    what a dict of the ids as text held, in numpy arrays.  The codes are found by the hash
    of an id's text (``index.Index``), each found one checked against the id held under
    its code; ids whose hash another id has are looked up by text (``_clash``).  The ids
    are held as text arrays of CHUNK ids or more (``keys.text_array``), the newest few as
    str until there are CHUNK of them.

    A dict held each id as a str and a dict entry (~135 bytes) through the whole read:
    1.5 M one-call jobs' were ~190 MB of the read's peak, and once let go they left ~55 MB
    of the interpreter's small-object arenas half empty and resident for the rest of the
    run (a window's peak).  Here ~64 bytes an id, in arrays."""

    def __init__(self) -> None:
        self._index = Index()  # hash -> code
        self._chunks: list[np.ndarray] = []  # the ids' text in code order
        self._starts: list[int] = []  # the first code of each chunk
        self._pending: list[str] = []  # the last ids, not in a chunk yet
        self._clash: dict[str, int] = {}  # ids whose hash another id has, by text
        self._clashing: set[int] = set()  # those hashes
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[str]:
        """The ids' text in code order (as a dict's keys)."""
        for chunk in self._chunks:
            yield from chunk.tolist()
        yield from list(self._pending)

    def codes(self, ids: Iterable[bytes]) -> list[int]:
        """The codes of ``ids``, numbering new ones in order of appearance."""
        texts = [j.decode("utf-8", "surrogateescape") for j in ids]
        if not texts:
            return []
        keys = np.fromiter(map(_hash, texts), np.int64, len(texts))
        out = np.full(len(texts), -1, np.int64)
        slow = np.zeros(len(texts), bool)  # looked up by text (``_clash``)
        if self._clashing:
            slow = np.isin(keys, list(self._clashing))
        at, code = self._index.find(keys)
        keep = ~slow[at]
        at, code = at[keep], code[keep]
        if len(at):
            held = self._texts(code)
            same = np.fromiter(
                (texts[i] == t for i, t in zip(at.tolist(), held, strict=True)), bool, len(at)
            )
            out[at[same]] = code[same]
            if not same.all():  # another id holds the hash: both by text from now on
                for i, c, t in zip(at.tolist(), code.tolist(), held, strict=True):
                    if texts[i] != t:
                        self._clash.setdefault(t, c)
                        self._clashing.add(int(keys[i]))
                        slow[i] = True
        if slow.any():
            self._one_by_one(texts, keys, out)
        else:
            self._number_new(texts, keys, out)
        return out.tolist()

    def _number_new(self, texts: list[str], keys: np.ndarray, out: np.ndarray) -> None:
        """Number the ids not found (``out`` -1), in order of first appearance."""
        rest = np.flatnonzero(out < 0)
        if not len(rest):
            return
        uniq, first, inverse = unique(keys[rest], return_index=True, return_inverse=True)
        if len(uniq) < len(rest):  # an id twice, or two ids of one hash: their texts tell
            lead = rest[first[inverse]]
            pairs = zip(lead.tolist(), rest.tolist(), strict=True)
            if any(texts[a] != texts[b] for a, b in pairs):
                self._one_by_one(texts, keys, out)
                return
        order = np.argsort(first, kind="stable")  # the new ids by first appearance
        rank = np.empty(len(order), np.int64)
        rank[order] = np.arange(len(order))
        codes = self._n + rank
        out[rest] = codes[inverse]
        self._index.add(uniq, codes)
        self._append([texts[i] for i in rest[first[order]].tolist()])

    def _one_by_one(self, texts: list[str], keys: np.ndarray, out: np.ndarray) -> None:
        """Number the ids not found (``out`` -1) one at a time, in order: a piece that holds
        ids of a hash another id has (never seen but with a hash made to collide).  Those
        not found by their hash were not in the index when the piece was looked up; the
        ones numbered here go to it at once at the end."""
        fresh: dict[int, int] = {}  # hashes first numbered in this piece -> their code
        for i in np.flatnonzero(out < 0).tolist():
            t, k = texts[i], int(keys[i])
            code = None
            if k in fresh and k not in self._clashing:
                held = self._texts(np.array([fresh[k]]))[0]
                if held == t:
                    code = fresh[k]
                else:  # a second id of this hash in this piece
                    self._clash.setdefault(held, fresh[k])
                    self._clashing.add(k)
            if k in self._clashing:
                code = self._clash.get(t)
            if code is None:
                code = self._n
                self._append([t])
                if k in self._clashing:
                    self._clash[t] = code
                else:
                    fresh[k] = code
            out[i] = code
        if fresh:
            self._index.add(np.fromiter(fresh, np.int64), np.fromiter(fresh.values(), np.int64))

    def _append(self, texts: list[str]) -> None:
        self._pending += texts
        self._n += len(texts)
        if len(self._pending) >= CHUNK:
            self._starts.append(self._n - len(self._pending))
            self._chunks.append(text_array(self._pending))
            self._pending = []

    def _texts(self, codes: np.ndarray) -> list[str]:
        """The ids' text of ``codes``."""
        sealed = self._n - len(self._pending)
        out: list[str] = [""] * len(codes)
        chunk = np.searchsorted(np.asarray(self._starts, np.int64), codes, side="right") - 1
        for c in np.unique(chunk[codes < sealed]).tolist():
            mine = np.flatnonzero((chunk == c) & (codes < sealed))
            got = self._chunks[c][codes[mine] - self._starts[c]].tolist()
            for i, t in zip(mine.tolist(), got, strict=True):
                out[i] = t
        for i in np.flatnonzero(codes >= sealed).tolist():
            out[i] = self._pending[int(codes[i]) - sealed]
        return out

    def names(self) -> np.ndarray:
        """The ids in code order as shown (undecodable bytes as U+FFFD): one text array."""
        parts = [*self._chunks, text_array(self._pending)] if self._pending else self._chunks
        shown = [
            c if c.dtype == TEXT else text_array([_shown(t) for t in c.tolist()]) for c in parts
        ]
        if not shown:
            return np.empty(0, TEXT)
        return shown[0] if len(shown) == 1 else np.concatenate(shown)


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
