"""A comparison of two runs as JSON, Markdown, plain text or CSV.

One code path for the ``compare`` command and the compare window's exports:
figures come from ``viewer.analysis.compare`` and are only formatted here;
the session objects are those of the report schema.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, replace
from pathlib import Path

from viewer.analysis.compare import Alignment, Comparison, FigureDiff, compare, headline
from viewer.analysis.floors import LABEL
from viewer.analysis.intervals import Range
from viewer.analysis.summary import SessionSummary
from viewer.analysis.units import percent
from viewer.export.format import (
    FRACTION_DIGITS,
    UNIT_DIGITS,
    human,
    markdown_table,
    markdown_text,
    num,
    text_table,
)
from viewer.export.report import summary_dict
from viewer.model import Session

SCHEMA = "cuzk-timeline-compare/1"
DIFF_HEAD_TAIL = ("delta", "relative")
CSV_HEAD = (
    "section",
    "figure",
    "label",
    "a",
    "b",
    "delta",
    "relative",
    "better",
    "judgement",
)


@dataclass(frozen=True, eq=False)
class CompareResult:
    """What a comparison export needs: both labels, the whole-run and the optional range diff."""

    label_a: str
    label_b: str
    whole: Comparison
    ranged: Comparison | None = None
    source_a: str = ""
    source_b: str = ""

    def sections(self) -> list[tuple[str, Comparison]]:
        out = [("whole runs", self.whole)]
        if self.ranged is not None:
            out.append((range_title(self.ranged), self.ranged))
        return out


def compare_runs(
    a: Session,
    b: Session,
    *,
    label_a: str = "A",
    label_b: str = "B",
    alignment: Alignment | None = None,
    rng: Range = None,
    source_a: str = "",
    source_b: str = "",
    whole: tuple[SessionSummary, SessionSummary] | None = None,
) -> CompareResult:
    """Whole runs, plus the aligned range ``rng`` when one is given (``whole``: the whole-run
    summaries of ``a`` and ``b`` when already computed)."""
    whole = compare(a, b, None, alignment, whole=whole)
    ranged = None
    if rng is not None:
        ranged = compare(a, b, rng, alignment)
    return CompareResult(label_a, label_b, whole, ranged, source_a, source_b)


def run_label(source: str | Path) -> str:
    """A run's default label: its file stem (``phase7_pw20`` for ``phase7_pw20.log.gz``)."""
    name = Path(source).name
    return name.split(".")[0] or name


def range_title(c: Comparison) -> str:
    if c.rng is None:
        return "whole runs"
    a, b = c.rng
    return f"aligned range {a / 1000:.1f} s -> {b / 1000:.1f} s after {c.alignment.describe()}"


# ---- cells --------------------------------------------------------------------------------------

_DIGITS = {"s/proof": 1, "ms": 0, "ratio": 2, "count": 0}


def value_text(r: FigureDiff, x: float | None) -> str:
    if x is None:
        return "-"
    if r.figure.unit == "fraction":
        return percent(x)
    tail = human(x) if r.figure.unit == "ms" else ""
    return f"{x:.{_DIGITS[r.figure.unit]}f}{tail}"


def delta_text(r: FigureDiff) -> str:
    d = r.delta
    if d is None:
        return "-"
    if r.figure.unit == "fraction":
        return f"{d * 100:+.1f} pp"
    tail = human(d, signed=True) if r.figure.unit == "ms" else ""
    return f"{d:+.{_DIGITS[r.figure.unit]}f}{tail}"


def relative_text(r: FigureDiff) -> str:
    return "-" if r.relative is None else percent(r.relative, signed=True)


def diff_rows(c: Comparison) -> list[tuple[str, str, str, str, str]]:
    """figure | A | B | delta | relative, in ``FIGURES`` order."""
    return [
        (r.figure.label, value_text(r, r.a), value_text(r, r.b), delta_text(r), relative_text(r))
        for r in c.rows
    ]


# ---- JSON ---------------------------------------------------------------------------------------


def diff_dict(c: Comparison) -> dict:
    return {
        r.figure.key: {
            "a": num(r.a, UNIT_DIGITS[r.figure.unit]),
            "b": num(r.b, UNIT_DIGITS[r.figure.unit]),
            "delta": num(r.delta, UNIT_DIGITS[r.figure.unit]),
            "relative": num(r.relative, FRACTION_DIGITS),
            "better": "lower" if r.figure.lower_is_better else "higher",
            "judgement": r.judgement or None,
        }
        for r in c.rows
    }


def compare_dict(res: CompareResult, *, rows: bool = False) -> dict:
    """The ``cuzk-timeline-compare/1`` object: whole-run ``a``, ``b``, ``diff`` (+ ``range``);
    ``rows``: the sessions' tables left as ``Rows`` (``summary_dict``), for ``json_parts``."""
    w = res.whole
    out = {
        "schema": SCHEMA,
        "labels": {"a": res.label_a, "b": res.label_b},
        "sources": {"a": res.source_a, "b": res.source_b},
        "alignment": {
            "mode": str(w.alignment),
            "a_offset_ms": num(w.offset_a),
            "b_offset_ms": num(w.offset_b),
        },
        "headline": headline(w, res.label_a, res.label_b),
        "a": summary_dict(w.a, rows=rows),
        "b": summary_dict(w.b, rows=rows),
        "diff": diff_dict(w),
    }
    r = res.ranged
    if r is not None and r.rng is not None:
        out["range"] = {
            "aligned_ms": [num(r.rng[0]), num(r.rng[1])],
            "a_ms": [num(r.rng[0] + r.offset_a), num(r.rng[1] + r.offset_a)],
            "b_ms": [num(r.rng[0] + r.offset_b), num(r.rng[1] + r.offset_b)],
            "a": summary_dict(r.a, rows=rows),
            "b": summary_dict(r.b, rows=rows),
            "diff": diff_dict(r),
        }
    return out


# ---- tables -------------------------------------------------------------------------------------


def _head(res: CompareResult) -> tuple[str, ...]:
    return ("figure", res.label_a, res.label_b, *DIFF_HEAD_TAIL)


def _alignment_line(res: CompareResult) -> str:
    w = res.whole
    return (
        f"Aligned on {w.alignment.describe()}: {res.label_a} at {w.offset_a / 1000:.3f} s, "
        f"{res.label_b} at {w.offset_b / 1000:.3f} s of their own logs."
    )


def _verdicts(c: Comparison, res: CompareResult) -> list[tuple[str, str, str]]:
    return [
        (res.label_a, c.a.verdict.kind, c.a.verdict.sentence),
        (res.label_b, c.b.verdict.kind, c.b.verdict.sentence),
    ]


def bound_line(c: Comparison, res: CompareResult) -> str:
    """Which floor binds each run, e.g. "binding floor: kernel (A) -> synthesis (B)"."""

    def name(sm: SessionSummary) -> str:
        f = sm.floors
        return "-" if f.bound is None else LABEL[f.bound]

    return f"binding floor: {name(c.a)} ({res.label_a}) -> {name(c.b)} ({res.label_b})"


def compare_markdown(res: CompareResult) -> str:
    """A headline, one diff table per section and both verdicts: what a write-up needs.
    Labels and file names come from outside (a file named ``<img src=x>.log``, a --label of
    ``=cmd|x``): they are written as literal text, never as markup."""
    res = replace(
        res,
        label_a=markdown_text(res.label_a),
        label_b=markdown_text(res.label_b),
        source_a=markdown_text(res.source_a),
        source_b=markdown_text(res.source_b),
    )
    out = [f"# {headline(res.whole, res.label_a, res.label_b)}"]
    if res.source_a or res.source_b:
        out.append(f"A = {res.source_a}, B = {res.source_b}. {_alignment_line(res)}")
    for title, c in res.sections():
        out += [f"## {title[0].upper()}{title[1:]}", markdown_table(_head(res), diff_rows(c))]
        out.append(bound_line(c, res))
        out += [f"**{label} ({kind}):** {sentence}" for label, kind, sentence in _verdicts(c, res)]
    return "\n\n".join(out) + "\n"


def compare_text(res: CompareResult) -> str:
    """Plain aligned tables for a terminal."""
    out = [headline(res.whole, res.label_a, res.label_b), _alignment_line(res)]
    for title, c in res.sections():
        out += ["", f"{title[0].upper()}{title[1:]}", "", text_table(_head(res), diff_rows(c))]
        out += ["", bound_line(c, res)]
        out += [""] + [
            f"{label} ({kind}): {sentence}" for label, kind, sentence in _verdicts(c, res)
        ]
    return "\n".join(out) + "\n"


def compare_csv(res: CompareResult) -> str:
    """One row per section and figure, raw numbers (efficiency as a fraction)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(CSV_HEAD)
    for title, c in res.sections():
        for r in c.rows:
            digits = UNIT_DIGITS[r.figure.unit]
            cells = (
                num(r.a, digits),
                num(r.b, digits),
                num(r.delta, digits),
                num(r.relative, FRACTION_DIGITS),
            )
            w.writerow(
                [
                    title,
                    r.figure.key,
                    r.figure.label,
                    *("" if v is None else repr(v) for v in cells),
                    "lower" if r.figure.lower_is_better else "higher",
                    r.judgement,
                ]
            )
    return buf.getvalue()
