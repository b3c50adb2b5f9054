"""When each daemon run started on the wall clock.

TIMELINE offsets count milliseconds from the engine's start, and the ``cuzk-daemon
starting`` tracing line that opens a run carries the UTC time it was written: the wall
time of offset t is that time + t.  The reader does not keep the line's text, so this
reads the log once more for those lines alone (a byte search, about grep's speed).
"""

from __future__ import annotations

import mmap
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from os import PathLike

from viewer.io.source import Skip, Source, log_path

DAEMON_START = b"cuzk-daemon starting"
TIMELINE = b"TIMELINE,"
ANSI = re.compile(rb"\x1b\[[0-9;?]*[ -/]*[@-~]")
ISO_TIME = re.compile(
    rb"(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d{1,9}))?\s*(Z|[+-]\d\d:?\d\d)?"
)


@dataclass(frozen=True)
class DaemonStart:
    """One ``cuzk-daemon starting`` line: its UTC time (epoch ms, None when the line has
    no time) and whether TIMELINE lines follow it before the next such line."""

    wall_ms: float | None
    has_events: bool = False


def parse_wall_ms(line: bytes) -> float | None:
    """The epoch ms of the first ISO 8601 time in ``line`` (ANSI codes ignored; UTC unless
    the time names an offset), or None."""
    m = ISO_TIME.search(ANSI.sub(b"", line))
    if m is None:
        return None
    y, mo, d, h, mi, s = (int(g) for g in m.groups()[:6])
    frac = m[7] or b"0"
    try:
        when = datetime(y, mo, d, h, mi, s, tzinfo=UTC)
    except ValueError:
        return None
    zone = m[8]
    if zone and zone != b"Z":
        text = zone.replace(b":", b"").decode()
        sign = -1 if text[0] == "-" else 1
        when -= sign * timedelta(hours=int(text[1:3]), minutes=int(text[3:5]))
    return when.timestamp() * 1000.0 + int(frac) / 10 ** len(frac) * 1000.0


def daemon_starts(path: str | PathLike) -> tuple[bool, list[DaemonStart]]:
    """(whether TIMELINE lines come before the first daemon start, the daemon starts in
    file order), reading ``path`` (plain, .gz or .zst) once."""
    lead = False
    starts: list[DaemonStart] = []
    with Source(log_path(path)) as source:
        if source.compression == "plain":
            with mmap.mmap(source.fileno(), 0, access=mmap.ACCESS_READ) as whole:
                chunks: Iterable = [(whole, 0, min(len(whole), source.total))]
                lead = _scan(chunks, starts)
        else:
            lead = _scan(source.chunks(), starts)
    return lead, starts


def _scan(chunks: Iterable, starts: list[DaemonStart]) -> bool:
    """Append the daemon starts of ``chunks`` (of whole lines) to ``starts``; True when
    TIMELINE lines come before the first."""
    lead = False
    for chunk in chunks:
        if isinstance(chunk, Skip):
            continue
        buf, a, b = chunk
        at = a
        while True:
            hit = buf.find(DAEMON_START, at, b)
            if buf.find(TIMELINE, at, b if hit < 0 else hit) >= 0:
                if starts:
                    starts[-1] = DaemonStart(starts[-1].wall_ms, True)
                else:
                    lead = True
            if hit < 0:
                break
            first = max(buf.rfind(b"\n", a, hit), buf.rfind(b"\r", a, hit), a - 1) + 1
            end = _line_end(buf, hit, b)
            starts.append(DaemonStart(parse_wall_ms(buf[first:end])))
            at = end
    return lead


def _line_end(buf: bytes, at: int, b: int) -> int:
    ends = [e for e in (buf.find(b"\n", at, b), buf.find(b"\r", at, b)) if e >= 0]
    return min(ends) if ends else b


def session_wall_starts(path: str | PathLike, sessions: int) -> list[float | None]:
    """The wall time (epoch ms, UTC) of offset 0 of each of the log's ``sessions``, None
    where it is unknown.

    The reader starts a session at the first TIMELINE event after each daemon start (and
    where offsets restart without one): when the runs found here (TIMELINE lines before
    the first daemon start, then every daemon start with TIMELINE lines after it) are
    exactly the sessions, they pair up in order; otherwise a restart without its line
    leaves the pairing unknown, and every session is None.
    """
    lead, starts = daemon_starts(path)
    runs = [None] if lead else []
    runs += [s.wall_ms for s in starts if s.has_events]
    return runs if len(runs) == sessions else [None] * sessions
