"""The analysis tables (transitions, gaps, jobs, kernel) as one DataFrame, CSV or Markdown.

For write-ups and spreadsheets: the rows come straight from ``viewer.analysis``
with a ``session`` column in front and times in ms; the Markdown uses the
report's table layout.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from viewer.analysis import idle_gaps, job_table, transitions
from viewer.analysis.intervals import Range, check_range, overlap_ms
from viewer.analysis.kernels import kernel_intervals
from viewer.export.format import csv_cell, markdown_table, markdown_text
from viewer.model import Session, Timeline

TABLES = ("transitions", "gaps", "jobs", "kernel")


def select_sessions(timeline: Timeline, session: int | None = None) -> list[Session]:
    """Every session, or only the one at position ``session`` of ``timeline.sessions``
    (ValueError naming the file and the session numbers it has)."""
    if session is None:
        return list(timeline.sessions)
    return [timeline.numbered(session + 1)]


def _ids(s: Session, jobs: np.ndarray) -> np.ndarray:
    return s.jobs["job_id"].to_numpy(dtype=object)[jobs.astype(np.int64)]


def _transitions(s: Session, rng: Range) -> pd.DataFrame:
    return transitions(s, rng).rename(columns={"time": "time_ms"})


def _gaps(s: Session, rng: Range) -> pd.DataFrame:
    g = idle_gaps(s, rng)
    g = g.assign(
        before_id=_ids(s, g["before_job"].to_numpy()), after_id=_ids(s, g["after_job"].to_numpy())
    )
    return g.rename(columns={"start": "start_ms", "end": "end_ms", "ms": "gap_ms"})


def _jobs(s: Session, rng: Range) -> pd.DataFrame:
    times = ["first_gpu_start", "completed", "synth_start", "synth_end"]
    return job_table(s, rng).rename(columns={c: f"{c}_ms" for c in times})


def _kernel(s: Session, rng: Range) -> pd.DataFrame:
    """One row per GPU call with a kernel time touching ``rng``; ``in_range_ms`` is the
    part of the kernel inside it (the whole kernel without a range)."""
    k = kernel_intervals(s)
    ks, ke = k["kstart"].to_numpy(), k["kend"].to_numpy()
    inside = overlap_ms(ks, ke, rng)
    keep = np.ones(len(k), dtype=bool) if rng is None else (ke >= rng[0]) & (ks <= rng[1])
    k = k[keep]
    return pd.DataFrame(
        {
            "job": k["job"].to_numpy(),
            "job_id": _ids(s, k["job"].to_numpy()),
            "partition": k["partition"].to_numpy(),
            "worker": k["worker"].to_numpy(),
            "gpu": k["gpu"].to_numpy(),
            "kernel_start_ms": ks[keep],
            "kernel_ms": k["kms"].to_numpy(),
            "in_range_ms": inside[keep],
            "ntt_msm_h_ms": k["ntt_msm_h_ms"].to_numpy(),
            "batch_add_ms": k["batch_add_ms"].to_numpy(),
            "tail_msm_ms": k["tail_msm_ms"].to_numpy(),
            "gpu_ms": k["gpu_ms"].to_numpy(),
            "source": s.kernel_source,
        }
    )


_BUILDERS = {"transitions": _transitions, "gaps": _gaps, "jobs": _jobs, "kernel": _kernel}


def table_frame(
    timeline: Timeline, name: str, session: int | None = None, rng: Range = None
) -> pd.DataFrame:
    """Table ``name`` (one of ``TABLES``) of every chosen session, with a ``session`` column."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown table {name!r} (tables: {', '.join(TABLES)})")
    rng = check_range(rng)
    frames = []
    for s in select_sessions(timeline, session):
        f = _BUILDERS[name](s, rng)
        frames.append(f.assign(session=s.number)[["session", *f.columns]])
    if not frames:
        return pd.DataFrame({"session": pd.Series([], dtype="int64")})
    frames = [f for f in frames if len(f)] or frames[:1]
    return pd.concat(frames, ignore_index=True)


def table_csv(frame: pd.DataFrame) -> str:
    """RFC 4180 CSV text (times in ms, NaN as an empty cell).  Text cells (job ids come
    from the log) go through ``csv_cell``, so a spreadsheet never runs one as a formula;
    rows end in CRLF, so a cell holding a CR or LF is quoted and never splits its row."""
    text = frame.select_dtypes(include=["object", "string"]).columns
    safe = {c: [csv_cell(v) if isinstance(v, str) else v for v in frame[c]] for c in text}
    return frame.assign(**safe).to_csv(index=False, lineterminator="\r\n")


def _cell(x: object) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    if isinstance(x, bool | np.bool_):
        return "yes" if x else "no"
    if isinstance(x, float | np.floating):
        return f"{x:.0f}" if float(x).is_integer() else f"{x:.3f}".rstrip("0")
    return markdown_text(x)


def table_markdown(frame: pd.DataFrame) -> str:
    """A Markdown table in the report's layout."""
    rows = [tuple(_cell(x) for x in row) for row in frame.itertuples(index=False)]
    return markdown_table(tuple(frame.columns), rows) + "\n"
