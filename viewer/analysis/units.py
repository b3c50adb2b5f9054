"""Figures written for people, defined once for the axis, panels, status bar, tooltips,
captions, the report, the comparison and the what-if (no Qt): durations in ms, s, min, h or
days as their size asks, fixed-point figures with a unit, percentages, positions on a
session's clock and wall-clock times.  The window marks an unknown figure with an em dash;
text for terminals and Markdown passes ``unknown="-"``."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime

#: Thousands separator of every figure (a thin space: "3 746 ms").
THIN = "\u2009"
#: Below this many ms a duration is written in ms.
MS_BELOW = 10_000.0
#: Below this many ms a duration (and a position) is written in seconds.
SECONDS_BELOW = 120_000.0
MINUTE, HOUR, DAY = 60_000.0, 3_600_000.0, 86_400_000.0


def _unknown(ms: float | None) -> bool:
    return ms is None or not math.isfinite(ms)


def group(text: str) -> str:
    """Python's "," thousands separators as thin spaces."""
    return text.replace(",", THIN)


_GROUPED = re.compile(r"(?<=\d)[ \u2009\u202f](?=\d{3}(?!\d))")


def ungroup(text: str) -> str:
    """``text`` without thousands separators ("4 490" -> "4490"), for the clipboard."""
    return _GROUPED.sub("", text)


#: How an unknown figure (None, NaN, inf) is written in the window.
UNKNOWN = "\u2014"


def decimals(value: float, digits: int) -> int:
    """``digits``, or more below 1 where that keeps two significant digits: a daemon serving
    PoSt proofs finishes one every 0.09 s, which one decimal wrote "0.1 s/proof" beside a
    measured 0.10 (ratio 0.90 read as 1.00)."""
    v = abs(float(value))
    if not 0 < v < 1 or not math.isfinite(v):
        return digits
    return max(digits, min(3, 1 - math.floor(math.log10(v))))  # (3: the log's ms)


def per_proof(value: float) -> str:
    """A figure in seconds (s/proof, a floor) as the verdict and the panels write it: one
    decimal, more below 1 (``decimals``)."""
    return f"{value:.{decimals(value, 1)}f}"


def fixed(value: float | None, digits: int = 1, unit: str = "s", unknown: str = UNKNOWN) -> str:
    """``value`` with ``digits`` decimals and its unit: "37.5 s", "3746 ms", "43.7 s/proof"."""
    if _unknown(value):
        return unknown
    return f"{value:.{digits}f} {unit}" if unit else f"{value:.{digits}f}"


def counted(count: int, noun: str, *, grouped: bool = False) -> str:
    """``1 job``, ``2 jobs``, ``0 jobs``; ``grouped``: ``12 345 lines``."""
    number = group(f"{count:,}") if grouped else str(count)
    return f"{number} {noun}" + ("" if count == 1 else "s")


def percent(
    fraction: float | None, digits: int = 1, *, signed: bool = False, unknown: str = UNKNOWN
) -> str:
    """A fraction as a percentage: "99.5 %" (``signed``: "+2.6 %", "-14.3 %")."""
    if _unknown(fraction):
        return unknown
    return f"{fraction * 100:{'+' if signed else ''}.{digits}f} %"


def duration(ms: float | None) -> str:
    """ "850 ms", "3 746 ms" below 10 s, "37.5 s" below 2 min, "4 min 5 s" below an hour,
    "1 h 12 min" below a day, then "2 d 3 h"; an em dash when unknown."""
    if _unknown(ms):
        return "—"
    sign, ms = ("-" if ms < 0 else ""), abs(float(ms))
    if ms < MS_BELOW:
        return sign + group(f"{ms:,.0f} ms")
    if ms < SECONDS_BELOW:
        return f"{sign}{ms / 1000:.1f} s"
    if ms < HOUR - 500:
        return sign + _pair(round(ms / 1000), 60, "min", "s")
    if ms < DAY - MINUTE / 2:
        return sign + _pair(round(ms / MINUTE), 60, "h", "min")
    return sign + _pair(round(ms / HOUR), 24, "d", "h")


def plain_duration(ms: float | None) -> str:
    """``duration`` with plain spaces ("3 746 ms", "4 d 10 h"), for text that may be copied
    into plain-ASCII places (annotation labels, terminal output)."""
    return duration(ms).replace(THIN, " ")


def _pair(count: int, per: int, big: str, small: str) -> str:
    a, b = divmod(count, per)
    return f"{a:,} {big}".replace(",", THIN) + (f" {b} {small}" if b else "")


def seconds(s: float | None, digits: int = 1, unit: str = "s") -> str:
    """A figure given in seconds (s/proof ...): "37.4 s", and in min / h from 2 min on."""
    if _unknown(s):
        return "—"
    if abs(s) * 1000 < SECONDS_BELOW:
        return f"{s:.{decimals(s, digits)}f} {unit}"
    text = duration(s * 1000)
    return text + unit.removeprefix("s")  # "10 min/proof"


def position(ms: float | None, decimals: int = 3, clock: bool | None = None) -> str:
    """A time on the session's clock: "75.742 s" below 2 min, then "12:05.742" (min:s) and
    "1:12:05.742" (h:min:s); days as "2 d 01:12:05.742".  ``clock`` forces either form
    (a table column writes all its times alike)."""
    if _unknown(ms):
        return "—"
    sign, ms = ("-" if ms < 0 else ""), abs(float(ms))
    if (ms < SECONDS_BELOW) if clock is None else not clock:
        return f"{sign}{ms / 1000:.{decimals}f} s"
    scale = 10**decimals
    whole = round(ms / 1000 * scale)
    secs, frac = divmod(whole, scale)
    days, secs = divmod(secs, 86_400)
    h, rest = divmod(secs, 3600)
    m, s = divmod(rest, 60)
    tail = f".{frac:0{decimals}d}" if decimals else ""
    if days:
        return f"{sign}{days} d {h:02d}:{m:02d}:{s:02d}{tail}"
    if h:
        return f"{sign}{h}:{m:02d}:{s:02d}{tail}"
    return f"{sign}{m}:{s:02d}{tail}"


def span(start_ms: float, end_ms: float) -> str:
    """A range of the session's clock, both ends alike: "64.000 s → 84.000 s (20.0 s)",
    "1:40.000 → 5:00.000 (3 min 20 s)"."""
    clock = max(abs(start_ms), abs(end_ms)) >= SECONDS_BELOW
    ends = f"{position(start_ms, clock=clock)} → {position(end_ms, clock=clock)}"
    return f"{ends} ({duration(end_ms - start_ms)})"


# ------------------------------------------------------------------ axis ticks

#: Tick spacings the time axis uses once a view spans minutes, in ms (round on a clock).
CLOCK_STEPS_MS = tuple(
    s * 1000.0
    for s in (
        1, 2, 5, 10, 15, 30,
        60, 120, 300, 600, 900, 1800,
        3600, 7200, 10800, 21600, 43200,
        86400, 172800, 432000, 864000, 1728000,
    )
)  # fmt: skip


def clock_steps(span_ms: float, labels: float) -> tuple[float, float]:
    """(major, minor) tick spacing in ms for a view ``span_ms`` wide with room for about
    ``labels`` labels: the smallest clock step giving at most that many, and the largest
    clock step that divides it at most half as long."""
    want = span_ms / max(labels, 1.0)
    major = next((s for s in CLOCK_STEPS_MS if s >= want), None)
    if major is None:  # beyond 20 days: whole multiples of 20 days
        major = CLOCK_STEPS_MS[-1] * math.ceil(want / CLOCK_STEPS_MS[-1])
    minor = max((s for s in CLOCK_STEPS_MS if s <= major / 2 and major % s == 0), default=major / 2)
    return major, minor


def clock_tick(ms: float, spacing_ms: float) -> str:
    """A tick label on the session's clock for ticks ``spacing_ms`` apart (a clock step):
    "10 min", "1 h 10 min", "2 h", "1 d 6 h", "4 min 30 s"."""
    sign, ms = ("-" if ms < 0 else ""), abs(ms)
    total_s = round(ms / 1000)
    if total_s == 0:
        return "0"
    d, rest = divmod(total_s, 86_400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    parts = [(d, "d"), (h, "h"), (m, "min"), (s, "s")]
    if spacing_ms >= HOUR:
        parts = parts[:2]
    elif spacing_ms >= MINUTE:
        parts = parts[:3]
    return sign + " ".join(f"{v} {unit}" for v, unit in parts if v)


# ----------------------------------------------------------------- wall clock


def _utc(epoch_ms: float, decimals: int) -> tuple[datetime, str]:
    """The UTC time of ``epoch_ms`` to whole seconds, and its ``decimals`` digits of a second
    (".250"; rounded with the seconds, so 0.9996 s never reads ".000" of the wrong second)."""
    scale = 10**decimals
    secs, frac = divmod(round(epoch_ms / 1000.0 * scale), scale)
    return datetime.fromtimestamp(secs, UTC), f".{frac:0{decimals}d}" if decimals else ""


def wall_time(epoch_ms: float, spacing_ms: float = 1000.0) -> str:
    """A wall-clock tick or cursor label in UTC: "01:12:05", with as many decimals of the
    second as ``spacing_ms`` needs ("01:12:05.250"), or "02-19 00:00" for whole days."""
    decimals = next((d for d in range(3) if round(spacing_ms) % 10 ** (3 - d) == 0), 3)
    when, frac = _utc(epoch_ms, decimals)
    if spacing_ms >= DAY:
        return when.strftime("%m-%d %H:%M")
    return when.strftime("%H:%M:%S") + frac


def wall_date(epoch_ms: float) -> str:
    """The UTC date of a wall-clock time, "2026-02-19"."""
    return datetime.fromtimestamp(epoch_ms / 1000.0, UTC).strftime("%Y-%m-%d")


def wall_stamp(epoch_ms: float, decimals: int = 3) -> str:
    """A full UTC wall-clock time, "2026-02-19 01:12:05.742 UTC"."""
    when, frac = _utc(epoch_ms, decimals)
    return when.strftime("%Y-%m-%d %H:%M:%S") + frac + " UTC"


# ---------------------------------------------------------------- one clock


@dataclass(frozen=True, slots=True)
class Clock:
    """How one session's times are written wherever the window writes one (axis, cursor,
    range, tables, Details, tooltips, scope lines, image captions): on the session's clock
    ("75.742 s", or "1:15.742" for every time once the session passes 2 min, so one pane
    never mixes the two), in aligned time ("-12.000 s aligned") or on the wall clock in UTC
    ("01:01:15.742 UTC"; with the date, "02-20 01:01:15.742 UTC", when the session crosses
    midnight)."""

    #: Epoch ms of offset 0 (wall-clock mode), else None.
    wall: float | None = None
    #: The offset written as 0 (aligned time), else None; ignored on the wall clock.
    zero: float | None = None
    #: Positions on m:ss for the whole session (it passes 2 min).
    long: bool = False
    #: Wall times carry their date (the session crosses a UTC midnight).
    dated: bool = False

    @classmethod
    def of(
        cls,
        start_ms: float,
        end_ms: float,
        wall: float | None = None,
        zero: float | None = None,
    ) -> Clock:
        """The clock of a session from ``start_ms`` to ``end_ms`` (its offsets)."""
        wall = wall if wall is not None and math.isfinite(wall) else None
        zero = zero if zero is not None and math.isfinite(zero) else None
        lo, hi = (float(v) if math.isfinite(v) else 0.0 for v in (start_ms, end_ms))
        if zero is not None:
            lo, hi = lo - zero, hi - zero
        dated = wall is not None and _day(wall + start_ms) != _day(wall + max(end_ms, start_ms))
        return cls(wall, zero, max(abs(lo), abs(hi)) >= SECONDS_BELOW, dated)

    @property
    def suffix(self) -> str:
        """What a time written alone is followed by: " UTC", " aligned" or nothing."""
        if self.wall is not None:
            return " UTC"
        return " aligned" if self.zero is not None else ""

    def at(self, ms: float | None, decimals: int = 3) -> str:
        """Time ``ms`` of the session without the suffix (table cells, both ends of a span)."""
        if _unknown(ms):
            return UNKNOWN
        if self.wall is not None:
            when, frac = _utc(self.wall + float(ms), decimals)
            return when.strftime("%m-%d %H:%M:%S" if self.dated else "%H:%M:%S") + frac
        if self.zero is not None:
            ms = float(ms) - self.zero
        return position(float(ms), decimals, clock=self.long)

    def stamp(self, ms: float | None, decimals: int = 3) -> str:
        """Time ``ms`` written alone: "75.742 s", "01:01:15.742 UTC"."""
        text = self.at(ms, decimals)
        return text if text == UNKNOWN else text + self.suffix

    def span(self, start_ms: float, end_ms: float) -> str:
        """A range: "64.000 s → 84.000 s (20.0 s)", "01:01:04.000 → 01:01:24.000 UTC (20.0 s)"."""
        ends = f"{self.at(start_ms)} → {self.at(end_ms)}{self.suffix}"
        return f"{ends} ({duration(end_ms - start_ms)})"


def _day(epoch_ms: float) -> str:
    return wall_date(epoch_ms) if math.isfinite(epoch_ms) else ""


#: The session's own clock in seconds, for callers that have no session.
SESSION_CLOCK = Clock()
