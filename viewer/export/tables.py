"""The analysis tables (transitions, gaps, jobs, kernel) as one ``Frame``, CSV or Markdown.

For write-ups and spreadsheets: the rows come straight from ``viewer.analysis``
with a ``session`` column in front and times in ms; the Markdown uses the
report's table layout.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator

import numpy as np

from viewer.analysis import idle_gaps, job_table, transitions
from viewer.analysis.intervals import Range, check_range, overlap_ms
from viewer.analysis.kernels import kernel_intervals
from viewer.export.format import ROWS_CHUNK, csv_cell, markdown_table_parts, markdown_text
from viewer.model import Session, Timeline
from viewer.model.frame import Frame

TABLES = ("transitions", "gaps", "jobs", "kernel")


def select_sessions(timeline: Timeline, session: int | None = None) -> list[Session]:
    """Every session, or only the one at position ``session`` of ``timeline.sessions``
    (ValueError naming the file and the session numbers it has)."""
    if session is None:
        return list(timeline.sessions)
    return [timeline.numbered(session + 1)]


def _ids(s: Session, jobs: np.ndarray) -> np.ndarray:
    return s.jobs["job_id"][jobs.astype(np.int64)]


def _transitions(s: Session, rng: Range) -> Frame:
    return transitions(s, rng).rename({"time": "time_ms"})


def _gaps(s: Session, rng: Range) -> Frame:
    g = idle_gaps(s, rng)
    g = g.assign(before_id=_ids(s, g["before_job"]), after_id=_ids(s, g["after_job"]))
    return g.rename({"start": "start_ms", "end": "end_ms", "ms": "gap_ms"})


def _jobs(s: Session, rng: Range) -> Frame:
    times = ["first_gpu_start", "completed", "synth_start", "synth_end"]
    return job_table(s, rng).rename({c: f"{c}_ms" for c in times})


def _kernel(s: Session, rng: Range) -> Frame:
    """One row per GPU call with a kernel time touching ``rng``; ``in_range_ms`` is the
    part of the kernel inside it (the whole kernel without a range)."""
    k = kernel_intervals(s)
    ks, ke = k["kstart"], k["kend"]
    inside = overlap_ms(ks, ke, rng)
    keep = np.ones(len(k), dtype=bool) if rng is None else (ke >= rng[0]) & (ks <= rng[1])
    k = k[keep]
    return Frame(
        {
            "job": k["job"],
            "job_id": _ids(s, k["job"]),
            "partition": k["partition"],
            "worker": k["worker"],
            "gpu": k["gpu"],
            "kernel_start_ms": ks[keep],
            "kernel_ms": k["kms"],
            "in_range_ms": inside[keep],
            "ntt_msm_h_ms": k["ntt_msm_h_ms"],
            "batch_add_ms": k["batch_add_ms"],
            "tail_msm_ms": k["tail_msm_ms"],
            "gpu_ms": k["gpu_ms"],
            "source": s.kernel_source,
        }
    )


_BUILDERS = {"transitions": _transitions, "gaps": _gaps, "jobs": _jobs, "kernel": _kernel}


def table_frame(
    timeline: Timeline, name: str, session: int | None = None, rng: Range = None
) -> Frame:
    """Table ``name`` (one of ``TABLES``) of every chosen session, with a ``session`` column."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown table {name!r} (tables: {', '.join(TABLES)})")
    rng = check_range(rng)
    frames = []
    for s in select_sessions(timeline, session):
        f = _BUILDERS[name](s, rng)
        frames.append(f.assign(session=s.number)[["session", *f.columns]])
    if not frames:
        return Frame({"session": np.zeros(0, dtype=np.int64)})
    frames = [f for f in frames if len(f)] or frames[:1]
    # One session's table as it is (a concat copied every column: 1.5 M transitions' at
    # the CSV export's peak).
    return frames[0] if len(frames) == 1 else Frame.concat(frames)


def table_csv(frame: Frame) -> str:
    """RFC 4180 CSV text (times in ms, NaN as an empty cell).  Text cells (job ids come
    from the log) go through ``csv_cell``, so a spreadsheet never runs one as a formula;
    rows end in CRLF, so a cell holding a CR or LF is quoted and never splits its row."""
    return "".join(table_csv_parts(frame))


def table_csv_parts(frame: Frame) -> Iterator[str]:
    """``table_csv`` a chunk of ROWS_CHUNK rows at a time, their cells made as they are
    written (1.5 M transitions as Python values at once, and their text, took GBs)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(frame.columns)
    columns = [v for _, v in frame.items()]
    for a in range(0, len(frame), ROWS_CHUNK):
        cells = (_csv_cells(v[a : a + ROWS_CHUNK]) for v in columns)
        writer.writerows(zip(*cells, strict=True))
        yield out.getvalue()
        out.seek(0)
        out.truncate()
    if out.tell():  # no row: the header alone
        yield out.getvalue()


def _csv_cells(values: np.ndarray) -> list:
    """A column's cells as the csv module writes them: NaN and None empty, text escaped."""
    cells = values.tolist()
    if values.dtype.kind == "f":
        return ["" if x != x else x for x in cells]
    if values.dtype.kind in "OT":  # objects, or numpy's strings
        return [csv_cell(x) if isinstance(x, str) else "" if x != x else x for x in cells]
    return cells


def _cell(x: object) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, float | np.floating):
        return f"{x:.0f}" if float(x).is_integer() else f"{x:.3f}".rstrip("0")
    return markdown_text(x)


def table_markdown(frame: Frame) -> str:
    """A Markdown table in the report's layout."""
    return "".join(table_markdown_parts(frame))


def table_markdown_parts(frame: Frame) -> Iterator[str]:
    """``table_markdown`` a chunk of ROWS_CHUNK rows at a time."""
    columns = [v for _, v in frame.items()]

    def rows(a: int, b: int) -> list[tuple[str, ...]]:
        return [tuple(map(_cell, r)) for r in zip(*(v[a:b].tolist() for v in columns), strict=True)]

    yield from markdown_table_parts(tuple(frame.columns), len(frame), rows)
    yield "\n"
