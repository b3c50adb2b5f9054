"""`python -m viewer info LOG`: what the reader found in a log, session by session."""

from __future__ import annotations

import argparse
import json
import sys
import textwrap
from collections.abc import Iterator

from viewer.analysis.cache import forget_since, made
from viewer.commands.common import add_workers_argument, load, named
from viewer.model import Session
from viewer.model.timeline import display_path

DESCRIPTION = """\
Read a cuzk daemon log (plain, .gz or .zst) and print, for every daemon run
(session) in it: TIMELINE events accepted, lines skipped by reason, jobs,
partitions (GPU calls), the GPU workers of each GPU, GPU calls that never
ended (open intervals) and the time span.  Use it to check that a log reads
cleanly before opening it in the viewer or running `report`.
"""

EPILOG = """\
exit status: 0 on success, 2 when the file is missing, unreadable or not a cuzk log.
examples:
  {prog} info run.log
  {prog} info --json run.log.zst
  {prog} info --workers-per-gpu 2 grepped-timeline-only.log
"""


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="what the reader found: sessions, events, skipped lines",
        description=DESCRIPTION,
        epilog=named(EPILOG),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="LOG", help="cuzk daemon log (.log, .gz, .zst)")
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    add_workers_argument(
        p,
        help="GPU workers per GPU when the log has no 'GPU worker started' lines "
        "(worker W is then on GPU W // N; default: all workers on GPU 0)",
    )


def run(args: argparse.Namespace) -> int:
    timeline = load("info", args.path, args.workers_per_gpu)
    if timeline is None:
        return 2
    pieces = json_pieces if args.json else text_pieces
    for piece in pieces(args.path, timeline.sessions):
        sys.stdout.write(piece)
    return 0


def _summaries(sessions: list[Session]) -> Iterator[tuple[Session, dict]]:
    """Each session with its summary, its tables let go once it is written (30 000 daemon
    restarts held every summary, their text and the views read: ~150 MB)."""
    for session in sessions:
        had = made(session)
        yield session, session_summary(session)
        forget_since(session, had)


def json_pieces(path: str, sessions: list[Session]) -> Iterator[str]:
    """``json.dumps({"sessions": [summaries]}, indent=2)`` and a newline, a session at a
    time (the same text)."""
    if not sessions:
        yield json.dumps({"sessions": []}, indent=2) + "\n"
        return
    yield '{\n  "sessions": ['
    sep = "\n"
    for _, summary in _summaries(sessions):
        yield sep + textwrap.indent(json.dumps(summary, indent=2), "    ")
        sep = ",\n"
    yield "\n  ]\n}\n"


def text_pieces(path: str, sessions: list[Session]) -> Iterator[str]:
    """A few readable lines per session and a newline, a session at a time."""
    yield f"{display_path(path)}: {len(sessions)} session(s)"
    for session, summary in _summaries(sessions):
        yield "\n" + "\n".join(_session_lines(session, summary))
    yield "\n"


def session_summary(session: Session) -> dict:
    """The JSON shape of one session."""
    from viewer.analysis.budget import budget
    from viewer.export.report import budget_dict

    out = {
        "session": session.number,
        "index": session.index,
        "events": int(session.events),
        "skipped": {k: int(v) for k, v in sorted(session.skipped.items())},
        "jobs": len(session.jobs),
        "partitions": len(session.partitions),
        "gpus": {str(g): ws for g, ws in session.gpus.items()},
        "open_intervals": session.open_intervals,
        "start_ms": int(session.start_ms),
        "end_ms": int(session.end_ms),
    }
    if (b := budget(session)) is not None:  # a budget-gated daemon's (its head says so)
        out["budget"] = budget_dict(b)
    return out


def _session_lines(session: Session, s: dict) -> list[str]:
    """The lines of one session, the blank line before them first."""
    span_s = (s["end_ms"] - s["start_ms"]) / 1000
    skipped = sum(s["skipped"].values())
    lines = [
        "",
        f"session {session.number}",
        f"  events accepted   {s['events']}",
        f"  skipped lines     {skipped}"
        + (" (" + ", ".join(f"{k}: {v}" for k, v in s["skipped"].items()) + ")" if skipped else ""),
        f"  jobs              {s['jobs']}",
        f"  partitions        {s['partitions']}",
        "  gpus              "
        + (
            "; ".join(f"GPU {g}: workers {', '.join(map(str, ws))}" for g, ws in s["gpus"].items())
            or "none"
        ),
        f"  open intervals    {s['open_intervals']}",
        f"  time span         {s['start_ms']} - {s['end_ms']} ms ({span_s:.1f} s)",
        f"  kernel time from  {session.kernel_source}",
    ]
    if "budget" in s:
        from viewer.analysis.budget import budget

        lines.append(f"  memory budget     {budget(session).describe()}")
    lines += [f"  note: {n}" for n in session.notes]
    return lines
