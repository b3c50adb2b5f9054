"""Number cells and table layouts shared by the report, the tables, the comparison and the
image captions: one definition of how a figure is written."""

from __future__ import annotations

import functools
import math
import re
import secrets
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import orjson

from viewer.analysis.units import decimals, fixed, percent, plain_duration
from viewer.model.timeline import display_path  # noqa: F401  (re-exported: one definition)

Row = Sequence[str]


#: JSON's one precision rule, in every document (report, compare, whatif, fleet, tables):
#: times to the microsecond, so ms to 3 decimals and s to 6; fractions, ratios and shares to
#: 6 decimals (one part per million).  A figure has the same digits wherever it appears.
MS_DIGITS = 3
S_DIGITS = 6
FRACTION_DIGITS = 6
#: Digits by a compared figure's unit (``analysis.compare.Figure.unit``).
UNIT_DIGITS = {
    "ms": MS_DIGITS,
    "s/proof": S_DIGITS,
    "fraction": FRACTION_DIGITS,
    "ratio": FRACTION_DIGITS,
    "count": FRACTION_DIGITS,
}


def num(x: float | None, digits: int = MS_DIGITS) -> float | None:
    """A JSON-safe number rounded to ``digits`` decimals: NaN / inf / None -> None."""
    if x is None or not math.isfinite(float(x)):
        return None
    return round(float(x), digits)


def nums(values, digits: int = MS_DIGITS) -> list[float | None]:
    """``num`` of every value of an array, vectorized (big reports have 10^5 rows)."""
    a = np.round(np.asarray(values, dtype=np.float64), digits)
    out = a.tolist()
    if not np.isfinite(a).all():
        out = [None if not math.isfinite(x) else x for x in out]
    return out


def records(**fields: object) -> list[dict]:
    """One dict per row, keys in the order given: list / array values are the columns (of
    one length), anything else a constant of every row.  Reports and traces build 10^5 of
    them."""
    spec, cols = [], []
    for key, value in fields.items():
        if isinstance(value, list | np.ndarray):
            spec.append((key, False, None))
            cols.append(value.tolist() if isinstance(value, np.ndarray) else value)
        else:
            spec.append((key, True, value))
    if not cols:
        return []
    if len({len(c) for c in cols}) > 1:
        raise ValueError(f"columns of unequal length: {[len(c) for c in cols]}")
    return _row_maker(tuple(spec))(cols)


@functools.lru_cache(maxsize=64)
def _row_maker(spec: tuple[tuple[str, bool, object], ...]) -> Callable[[list], list[dict]]:
    """Compile ``columns -> [{key: value, ...}, ...]`` for one key layout: a dict display
    per row is 2-2.5x faster than ``dict(zip(keys, row))`` (87 000 gap rows: 23 ms against
    41 ms).  ``spec`` holds (key, is_constant, constant); keys and constants are the
    program's own literals, written with ``repr``."""
    names = [f"v{i}" for i, (_, const, _) in enumerate(spec) if not const]
    items, it = [], iter(names)
    for key, const, value in spec:
        items.append(f"{key!r}: {value!r}" if const else f"{key!r}: {next(it)}")
    return eval(f"lambda cols: [{{{', '.join(items)}}} for {', '.join(names)}, in zip(*cols)]")  # noqa: S307


#: Rows a ``Rows`` table encodes at once (each row a dict of ~600 bytes while it lasts).
ROWS_CHUNK = 1 << 13


class Chunked:
    """A column of a ``Rows`` made a chunk of rows at a time: ``make(a, b)`` gives rows
    ``[a, b)`` (a table's length comes from its other columns)."""

    def __init__(self, make: Callable[[int, int], object]) -> None:
        self.make = make


class Rows:
    """A table of a JSON document written as ``records`` (a list of one object per row)
    but made a chunk of rows at a time (``rows``; ``encoded``, ``json_parts``, the trace's
    events): the columns stay arrays until their rows are written.  A report of 1.5 M
    one-call jobs held its jobs and transitions as 3 M dicts and their 10^7 Python numbers
    at once: 3 GB.  ``fields`` as ``records``'s, but a column may also be
    ``(array, convert)`` (``convert(array[a:b])`` gives its values), ``Chunked``, or a
    nested ``Rows`` (a column of objects)."""

    def __init__(self, **fields: object) -> None:
        self.fields = fields
        lengths = {_length(v) for v in fields.values()} - {None}
        if len(lengths) > 1:
            raise ValueError(f"columns of unequal length: {sorted(lengths)}")
        if not lengths and any(isinstance(v, Chunked) for v in fields.values()):
            raise ValueError("no column gives the number of rows")
        self.n = lengths.pop() if lengths else 0

    def __len__(self) -> int:
        return self.n

    def rows(self, a: int, b: int) -> list[dict]:
        """Rows ``[a, b)`` as ``records`` makes them."""
        out = {}
        for key, v in self.fields.items():
            if isinstance(v, tuple):
                array, convert = v
                out[key] = convert(array[a:b])
            elif isinstance(v, Rows):
                out[key] = v.rows(a, b)
            elif isinstance(v, Chunked):
                out[key] = v.make(a, b)
            elif isinstance(v, list | np.ndarray):
                out[key] = v[a:b]
            else:
                out[key] = v
        return records(**out)

    def records(self) -> list[dict]:
        """Every row as ``records`` makes them (the whole table at once)."""
        return self.rows(0, self.n) if self.n else []

    def encoded(self) -> Iterator[bytes]:
        """The JSON array of ``records()``, a chunk of rows at a time: the same bytes."""
        if not self.n:
            yield b"[]"
            return
        for a in range(0, self.n, ROWS_CHUNK):
            part = json_bytes(self.rows(a, min(a + ROWS_CHUNK, self.n)), False)
            yield (b"[" if a == 0 else b",") + part[1:-1]
        yield b"]"


def _length(v: object) -> int | None:
    """The rows of a ``Rows`` column (None: a constant, or made per chunk)."""
    if isinstance(v, tuple):
        return len(v[0])
    if isinstance(v, list | np.ndarray | Rows):
        return len(v)
    return None


def strs(values) -> list[str]:
    """A column's values as strings (job ids, worker names)."""
    return [str(v) for v in values]


def strs_or_none(values) -> list[str | None]:
    """A column's values as strings, None staying null (a job's kind, unknown)."""
    return [None if v is None else str(v) for v in values]


def bools(values) -> list[bool]:
    return np.asarray(values).astype(bool).tolist()


def ints(values) -> list[int]:
    return np.asarray(values).astype(int).tolist()


def materialized(obj: object) -> object:
    """``obj`` with every ``Rows`` in it as its ``records()`` (dicts and lists walked)."""
    if isinstance(obj, Rows):
        return obj.records()
    if isinstance(obj, dict):
        return {k: materialized(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [materialized(v) for v in obj]
    return obj


def json_parts(obj: object, newline: bool = True) -> Iterator[bytes]:
    """``json_bytes(materialized(obj))`` in pieces, each ``Rows`` encoded a chunk of rows
    at a time: the same bytes, without the whole document's rows ever held.  A table of
    one chunk or less is made in place, so that a document of short tables comes in one
    piece (3000 daemon runs' reports written in nine pieces each were 20 % slower)."""
    tables: list[Rows] = []
    # A table's place in the skeleton: a string no log can hold (NUL, which orjson writes
    # escaped, around a token drawn for this document).
    token = secrets.token_hex(8)

    def mark(x: object) -> object:
        if isinstance(x, Rows):
            if x.n <= ROWS_CHUNK:
                return x.records()
            tables.append(x)
            return f"\x00{token}.{len(tables) - 1}\x00"
        if isinstance(x, dict):
            return {k: mark(v) for k, v in x.items()}
        if isinstance(x, list):
            return [mark(v) for v in x]
        return x

    skeleton = json_bytes(mark(obj), newline)
    if not tables:
        yield skeleton
        return
    # Each table's place is its mark as orjson writes it: '"\u0000<token>.<i>\u0000"'.
    pieces = _TABLE_MARK.split(skeleton)
    marks = [(pieces[i], int(pieces[i + 1])) for i in range(1, len(pieces), 3)]
    if marks != [(token.encode(), i) for i in range(len(tables))]:
        # A string of the document shaped as a mark (no log's can be: the token is drawn
        # now): the document made whole rather than spliced wrong.
        yield json_bytes(materialized(obj), newline)
        return
    for i, piece in enumerate(pieces):
        if i % 3 == 2:
            yield from tables[int(piece)].encoded()
        elif i % 3 == 0 and piece:
            yield piece


#: A table's mark in a skeleton, as orjson writes it (one pattern, compiled once).
_TABLE_MARK = re.compile(rb'"\\u0000([0-9a-f]{16})\.(\d+)\\u0000"')


def json_bytes(obj: object, newline: bool = True) -> bytes:
    """Compact JSON of big documents (reports, traces) as UTF-8, ending with a newline
    unless ``newline`` is False.  orjson is ~15x faster than json's C encoder on 10^5 row
    objects.  NaN / inf become null, never invalid JSON.  Bytes go to a file or stdout as
    they are: one non-Latin-1 character (a thin space in a label) made the 14 MB report a
    28 MB two-byte str, decoded and encoded again on the way out (~50 ms)."""
    end = orjson.OPT_APPEND_NEWLINE if newline else 0
    return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY | end)


def to_json(obj: object) -> str:
    """``json_bytes`` as text, without the newline."""
    return json_bytes(obj, newline=False).decode()


# The report's cells in the shape of the published tables, from ``analysis.units`` (the one
# formatter module), with "-" for an unknown figure (plain text for terminals and Markdown).


#: From this many ms on, a figure in ms is followed by the duration people read
#: ("381705445 ms (4 d 10 h)"): past six digits nobody counts them.
HUMAN_FROM_MS = 600_000.0


def human(x: float | None, signed: bool = False) -> str:
    """`` (4 d 10 h)`` after a figure of ``x`` ms once it reaches ``HUMAN_FROM_MS``, else
    nothing; ``signed`` writes a gain with its "+"."""
    if x is None or not math.isfinite(x) or abs(x) < HUMAN_FROM_MS:
        return ""
    return f" ({'+' if signed and x > 0 else ''}{plain_duration(x)})"


def ms(x: float | None) -> str:
    """``3746 ms``, ``381705445 ms (4 d 10 h)``; ``-`` when unknown."""
    return fixed(x, 0, "ms", unknown="-") + human(x)


def sec(x: float | None, unit: str = "s") -> str:
    """``37.5 s`` (or another unit such as ``s/proof``); ``-`` when unknown."""
    return fixed(x, 1 if x is None else decimals(x, 1), unit, unknown="-")


def pct(x: float | None) -> str:
    """A fraction as ``99.5 %``; ``-`` when unknown."""
    return percent(x, unknown="-")


def markdown_table(head: Row, rows: Sequence[Row]) -> str:
    rows = list(rows)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines) + ("\n" + markdown_rows(rows) if rows else "")


def markdown_table_parts(
    head: Row, n: int, rows: Callable[[int, int], Sequence[Row]]
) -> Iterator[str]:
    """``markdown_table(head, rows(0, n))`` a chunk of ROWS_CHUNK rows at a time (a table
    of 1.5 M rows formatted at once took 1 GB)."""
    yield markdown_table(head, [])
    for a in range(0, n, ROWS_CHUNK):
        yield "\n" + markdown_rows(rows(a, min(a + ROWS_CHUNK, n)))


def markdown_rows(rows: Sequence[Row]) -> str:
    """A Markdown table's body lines (no line break after the last)."""
    return "\n".join("| " + " | ".join(r) + " |" for r in rows)


def text_table(head: Row, rows: Sequence[Row]) -> str:
    """Columns padded to their widest cell, for a terminal."""
    widths = [max(len(str(r[i])) for r in [head, *rows]) for i in range(len(head))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*head), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return "\n".join(line.rstrip() for line in lines)


# ---- text from outside (file names, job ids) in a document ----------------------------------


#: Characters that make Markdown markup (emphasis, code, links, tables, raw HTML).
_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]|~])")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def markdown_text(value: object) -> str:
    """``value`` as literal text inside Markdown (a table cell or a heading): no raw HTML,
    no emphasis, links or code, no line break, no ``|`` that would split a cell."""
    text = display_path(value)
    text = re.sub(r"[\r\n\t\v\f]+", " ", text)
    text = _MARKDOWN_SPECIAL.sub(r"\\\1", text)
    return re.sub(r"[&<>]", lambda m: _HTML[m.group()], text)


#: A spreadsheet reads a cell starting with one of these as a formula (CSV injection).
CSV_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: str) -> str:
    """A text cell for CSV that a spreadsheet shows as text, never runs as a formula:
    a leading ``= + - @``, tab or CR gets a ``'`` in front (OWASP's advice)."""
    return "'" + value if value.startswith(CSV_FORMULA_START) else value
