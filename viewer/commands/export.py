"""`python -m viewer export LOG --out FILE`: a Perfetto trace, the report or one table, headless."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from viewer.commands.report import RANGE_HELP, _range

FORMATS = ("trace", "markdown", "csv")
BY_SUFFIX = {".json": "trace", ".md": "markdown", ".markdown": "markdown", ".csv": "csv"}
IMAGE_SUFFIXES = (".png", ".svg")
TABLES = ("transitions", "gaps", "jobs", "kernel")  # viewer.export.tables.TABLES, kept import-light

EPILOG = (
    """\
examples:
  python -m viewer export run.log --out run.trace.json     open it in ui.perfetto.dev
  python -m viewer export run.log --out report.md          same text as `report --markdown`
  python -m viewer export run.log --out gaps.csv --table gaps --range 0:600000

"""
    + RANGE_HELP
)


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="write a Perfetto / chrome://tracing trace, the report or a table to a file",
        description="Export a cuzk log for write-ups: a Chrome Trace Event JSON that Perfetto "
        "opens (one track per GPU worker, kernels nested in their calls, synthesis rows, "
        "idle gaps and sector transitions), the report as Markdown, or one analysis table "
        "as CSV / Markdown.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="LOG", help="log file (.log, .gz, .zst)")
    p.add_argument("--out", "-o", required=True, metavar="FILE", help="output file ('-': stdout)")
    p.add_argument(
        "--format",
        choices=FORMATS,
        default=None,
        help="default: from FILE's suffix (.json trace, .md markdown, .csv csv)",
    )
    p.add_argument(
        "--table", choices=TABLES, default=None, help="one table instead of the whole report"
    )
    p.add_argument("--session", type=int, default=None, metavar="N", help="only daemon run N")
    p.add_argument("--range", type=_range, default=None, metavar="A:B", help="time window (ms)")
    p.add_argument("--no-flows", action="store_true", help="trace: no synthesis -> GPU call arrows")
    p.add_argument(
        "--workers-per-gpu",
        type=int,
        default=None,
        metavar="N",
        help="GPU workers per GPU when the log has no 'GPU worker started' lines",
    )


def _fail(message: str) -> int:
    print(f"export: {message}", file=sys.stderr)
    return 2


def _format(args: argparse.Namespace) -> str:
    """The output format; ValueError saying why the options do not give one."""
    fmt = args.format or BY_SUFFIX.get(Path(args.out).suffix.lower())
    if fmt is None:
        raise ValueError(
            f"cannot tell the format from {args.out!r}: pass --format {{{','.join(FORMATS)}}}"
        )
    if fmt == "csv" and args.table is None:
        raise ValueError(f"--format csv needs --table {{{','.join(TABLES)}}}")
    if fmt == "trace" and args.table is not None:
        raise ValueError("--table goes with --format csv or markdown, not with a trace")
    return fmt


def run(args: argparse.Namespace) -> int:
    if Path(args.out).suffix.lower() in IMAGE_SUFFIXES:
        return _fail(
            f"image export is not available yet ({args.out}): export a trace (.json), "
            "Markdown (.md) or CSV (.csv), or use the viewer's screenshot"
        )
    try:
        fmt = _format(args)
    except ValueError as exc:
        return _fail(str(exc))
    from viewer.export.report import report_markdown
    from viewer.export.tables import table_csv, table_frame, table_markdown
    from viewer.export.trace import trace_events, write_trace
    from viewer.io import LogError, open_log

    try:
        timeline = open_log(args.path, workers_per_gpu=args.workers_per_gpu)
    except (LogError, OSError) as exc:
        return _fail(str(exc))
    to_stdout = args.out == "-"
    try:
        if fmt == "trace" and not to_stdout:
            write_trace(timeline, args.out, args.session, args.range, flows=not args.no_flows)
            print(f"export: wrote {args.out} (open it in https://ui.perfetto.dev)", file=sys.stderr)
            return 0
        if fmt == "trace":
            data = trace_events(timeline, args.session, args.range, flows=not args.no_flows)
            text = json.dumps(data, separators=(",", ":"), allow_nan=False) + "\n"
        elif args.table is not None:
            frame = table_frame(timeline, args.table, args.session, args.range)
            text = table_csv(frame) if fmt == "csv" else table_markdown(frame)
        else:
            text = report_markdown(timeline, args.session, args.range)
    except ValueError as exc:  # e.g. no such session
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot write {args.out}: {exc.strerror or exc}")
    if to_stdout:
        sys.stdout.write(text)
        return 0
    try:
        Path(args.out).write_text(text, encoding="utf-8")
    except OSError as exc:
        return _fail(f"cannot write {args.out}: {exc.strerror or exc}")
    print(f"export: wrote {args.out}", file=sys.stderr)
    return 0
