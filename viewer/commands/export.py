"""`python -m viewer export LOG --out FILE`: a Perfetto trace, the report, one table or an
annotated image of the lanes (PNG / SVG), headless."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from viewer.commands.common import (
    RANGE_HELP,
    Bound,
    add_log_argument,
    add_range_argument,
    add_session_argument,
    add_workers_argument,
    fail,
    load,
    named,
    session_position,
    write_stdout,
)

FORMATS = ("trace", "markdown", "csv")
#: Image sizes (logical px) and PNG device px per px; MAX_PIXELS bounds both the logical
#: and the device pixels of one image (about 0.5 GB of memory while it is drawn).
WIDTH = Bound(200, 20000, " px")
HEIGHT = Bound(150, 20000, " px")
SCALE = Bound(0.5, 8, integer=False)
MAX_PIXELS = 32_000_000
BY_SUFFIX = {".json": "trace", ".md": "markdown", ".markdown": "markdown", ".csv": "csv"}
IMAGE_SUFFIXES = (".png", ".svg")
TABLES = ("transitions", "gaps", "jobs", "kernel")  # viewer.export.tables.TABLES, kept import-light

EPILOG = (
    """\
examples:
  {prog} export run.log --out run.trace.json     open it in ui.perfetto.dev
  {prog} export run.log --out report.md          same text as `report --markdown`
  {prog} export run.log --out gaps.csv --table gaps --range 0:600000
  {prog} export run.log --out cold.png --range 64000:84000 --caption
  {prog} export run.log --out run.svg --width 1200 --annotations notes.json

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
        epilog=named(EPILOG),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_log_argument(p)
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
    add_session_argument(p)
    add_range_argument(p)
    p.add_argument("--no-flows", action="store_true", help="trace: no synthesis -> GPU call arrows")
    img = p.add_argument_group("images (.png / .svg)")
    img.add_argument(
        "--caption", action="store_true", help="add the range and its key figures under the lanes"
    )
    img.add_argument(
        "--annotations",
        metavar="FILE",
        default=None,
        help="draw the annotations saved in FILE (default: the log's sidecar, if any)",
    )
    img.add_argument("--no-annotations", action="store_true", help="draw no annotations")
    img.add_argument(
        "--width", type=WIDTH, default=1600, metavar="PX", help="200-20000, default 1600"
    )
    img.add_argument(
        "--height",
        type=HEIGHT,
        default=None,
        metavar="PX",
        help="150-20000, default: tall enough for every lane",
    )
    img.add_argument(
        "--scale", type=SCALE, default=2.0, help="PNG device pixels per PX, 0.5-8 (default 2)"
    )
    img.add_argument("--dark", action="store_true", help="dark background")
    add_workers_argument(p)


def _fail(message: str) -> int:
    return fail("export", message)


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


def _inputs(args: argparse.Namespace) -> list[str]:
    """The files this export reads: never to be written over."""
    return [p for p in (args.path, getattr(args, "annotations", None)) if p]


def _check_output(args: argparse.Namespace) -> str | None:
    """Why ``--out`` cannot be written (before the log is read), None when it can."""
    from viewer.export.files import resolve_output

    if args.out == "-":
        return None
    try:
        resolve_output(args.out, _inputs(args))
    except OSError as exc:
        return _write_error(args.out, exc)
    return None


def _name(path: str) -> str:
    from viewer.export.format import display_path

    return display_path(path)


def run(args: argparse.Namespace) -> int:
    if Path(args.out).suffix.lower() in IMAGE_SUFFIXES:
        return _run_image(args)
    try:
        fmt = _format(args)
    except ValueError as exc:
        return _fail(str(exc))
    if problem := _check_output(args):
        return _fail(problem)
    from viewer.export.files import write_output
    from viewer.export.format import json_bytes
    from viewer.export.report import report_markdown_parts
    from viewer.export.tables import table_csv_parts, table_frame, table_markdown_parts
    from viewer.export.trace import trace_events, write_trace

    timeline = load("export", args.path, args.workers_per_gpu)
    if timeline is None:
        return 2
    to_stdout = args.out == "-"
    try:
        session = session_position(timeline, args.session)
        if fmt == "trace" and not to_stdout:
            write_trace(timeline, args.out, session, args.range, flows=not args.no_flows)
            print(
                f"export: wrote {_name(args.out)} (open it in https://ui.perfetto.dev)",
                file=sys.stderr,
            )
            return 0
        if fmt == "trace":
            data = trace_events(timeline, session, args.range, flows=not args.no_flows)
            text = json_bytes(data)
        elif args.table is not None:
            frame = table_frame(timeline, args.table, session, args.range)
            parts = table_csv_parts if fmt == "csv" else table_markdown_parts
            text = parts(frame)  # written a chunk of rows at a time
        else:
            # A log of many daemon runs: its sessions over the cores, as `report` does.
            text = report_markdown_parts(timeline, session, args.range, os.cpu_count() or 1)
        if to_stdout:
            for part in [text] if isinstance(text, str | bytes) else text:
                write_stdout(part)
            return 0
        write_output(args.out, text, _inputs(args))
    except ValueError as exc:  # e.g. no such session
        return _fail(str(exc))
    except BrokenPipeError:  # stdout closed (`| head`): the command line's one rule, quiet
        raise
    except OSError as exc:
        return _fail(_write_error(args.out, exc))
    print(f"export: wrote {_name(args.out)}", file=sys.stderr)
    return 0


def _write_error(path: str, exc: OSError) -> str:
    """``cannot write FILE: reason``, or the refusal's own message (it names the file)."""
    if exc.strerror is None:
        return str(exc)
    return f"cannot write {_name(path)}: {exc.strerror}"


# ---- images -----------------------------------------------------------------------------------


def read_annotations(path: str | Path):
    """The AnnotationSet saved in ``path`` (any log's); ValueError naming the file and
    what is wrong with it."""
    from viewer.annotations import AnnotationSet, SidecarError, read_sidecar

    try:
        return AnnotationSet(read_sidecar(path))
    except SidecarError as exc:
        raise ValueError(f"{_name(path)}: {exc}") from None


def _sidecar_annotations(log: str):
    """The log's own sidecar, read without touching it (empty when there is none or it
    cannot be used: then a note on stderr says why)."""
    from viewer.annotations import load

    annotations, problem = load(log)
    if problem:
        print(f"export: drawing no annotations: {problem}", file=sys.stderr)
    return annotations


def _image_checks(args: argparse.Namespace) -> None:
    if args.table is not None or args.format is not None:
        raise ValueError("--table / --format go with .md / .csv / .json outputs, not images")
    if args.out == "-":
        raise ValueError("an image goes to a file, not to stdout")
    WIDTH.check("--width", args.width)
    HEIGHT.check("--height", args.height)
    SCALE.check("--scale", args.scale)
    if args.height is None:
        return
    png = Path(args.out).suffix.lower() == ".png"
    for name, pixels in (
        ("--width x --height", args.width * args.height),
        ("--width x --height x --scale²", args.width * args.height * args.scale**2 if png else 0),
    ):
        if pixels > MAX_PIXELS:
            raise ValueError(
                f"{name} is {pixels / 1e6:.0f} million pixels; an image has at most "
                f"{MAX_PIXELS / 1e6:.0f} million: make one of them smaller"
            )


def _max_height(args: argparse.Namespace) -> int:
    """The tallest image (logical px) the pixel budget allows at ``args``' width and scale."""
    scale2 = args.scale**2 if Path(args.out).suffix.lower() == ".png" else 1.0
    return int(min(HEIGHT.hi, MAX_PIXELS / (args.width * max(scale2, 1.0))))


def _quiet_qt(mode, context, message: str) -> None:
    """Qt messages to stderr, without the offscreen plugin's note on size hints."""
    if "propagateSizeHints" not in message:
        print(f"qt: {message}", file=sys.stderr)


def _run_image(args: argparse.Namespace) -> int:
    """Render the swimlanes offscreen, as the viewer shows them, to a PNG or SVG."""
    try:
        _image_checks(args)
        annotations = None
        if args.annotations and not args.no_annotations:
            annotations = read_annotations(args.annotations)
    except ValueError as exc:
        return _fail(str(exc))
    if problem := _check_output(args):
        return _fail(problem)
    # The page is painted offscreen, never shown: no display is needed, and one that is
    # named but gone (a stale DISPLAY over ssh) would make Qt abort the process.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

    timeline = load("export", args.path, args.workers_per_gpu)
    if timeline is None:
        return 2
    if not timeline.sessions:
        return _fail(f"{_name(args.path)}: no session to draw")
    try:
        session = timeline.numbered(args.session).index
    except ValueError as exc:
        return _fail(str(exc))
    if annotations is None and not args.no_annotations:
        annotations = _sidecar_annotations(args.path)

    from PySide6 import QtCore, QtWidgets

    from viewer.ui.writeups.image_export import full_plot_height, offscreen_view, write_image

    if QtWidgets.QApplication.instance() is None:
        QtCore.qInstallMessageHandler(_quiet_qt)
    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["viewer-export"])
    view, caption = offscreen_view(
        timeline,
        session,
        width=args.width,
        height=args.height,
        rng=args.range,
        annotations=annotations,
        caption=args.caption,
        dark=args.dark,
        max_height=_max_height(args),
    )
    needed, shown = full_plot_height(view), view.plot.viewport().height()
    if args.height is None and needed > shown + 1:
        print(
            f"export: the lanes need {needed:.0f} px; the image is cut at {shown} px "
            f"(the first lanes), within the {MAX_PIXELS / 1e6:.0f} million pixel budget",
            file=sys.stderr,
        )
    try:
        options = {"caption": caption}
        if Path(args.out).suffix.lower() == ".png":
            options["scale"] = args.scale
        write_image(view, args.out, inputs=_inputs(args), **options)
    except OSError as exc:
        return _fail(_write_error(args.out, exc))
    finally:
        view.close()
        view.deleteLater()
        app.processEvents()
    print(f"export: wrote {_name(args.out)}", file=sys.stderr)
    return 0
