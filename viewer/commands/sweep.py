"""`python -m viewer sweep LOG...`: runs of one machine lined up by the knob they differ in."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from viewer.commands.common import (
    GIB,
    add_format_arguments,
    add_memory_arguments,
    add_workers_argument,
    fail,
    memory_model,
    named,
    write_stdout,
)

EPILOG = """\
how: each log's knob values are what its head states (a harness's config line, a
budget-gated daemon's budget) or what it shows (the most syntheses at once, GPU workers
per GPU, the mean kernel). The knob is the one the runs differ in; a run that also
differs in another knob is set apart and named. The load model is fitted over every log
(as `whatif --calibrate` does), and the base run (the middle value, or --base) is
replayed at each value: the predicted s/proof with its band, and the memory held at
once (a range: see `{prog} whatif --help`). "best" compares measured s/proof where
runs were measured; the best region is every value within 5 % of the best.

examples:
  {prog} sweep runs/pw*.log.gz
  {prog} sweep runs/*.log --knob gw --ram-gib 512 --out sweep.png
  {prog} sweep run.log --values 8,10,12,14,16 --json   # one log: predicted only
"""
CHART = (".png", ".svg")
TABLES = (".md", ".csv", ".json", ".txt")


def _values(text: str) -> list[float]:
    out = []
    for part in text.split(","):
        try:
            out.append(float(part))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"give numbers separated by commas, not {text!r}"
            ) from None
    return out


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="line up runs of one machine by the knob they differ in: measured, predicted, memory",
        description="A tuning sweep from the logs: measured s/proof (interval and wall time / "
        "proofs) and predicted s/proof with its band across the values of one knob, the "
        "memory each value holds, the best value and the best that fits the RAM.",
        epilog=named(EPILOG),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "paths",
        nargs="+",
        metavar="LOG",
        help="daemon logs of one machine (files, folders or quoted globs)",
    )
    p.add_argument(
        "--knob",
        choices=("pw", "gw", "kernel", "budget"),
        help="the knob swept (default: the one the runs differ in)",
    )
    p.add_argument(
        "--values",
        type=_values,
        metavar="A,B,...",
        help="values to predict (default: the runs' values and half-way between)",
    )
    p.add_argument(
        "--base",
        metavar="LOG",
        help="the run the predictions start from (default: the middle value)",
    )
    p.add_argument(
        "--ram-gib",
        type=GIB,
        metavar="R",
        help="the machine's RAM: the best value whose memory fits",
    )
    add_memory_arguments(p)
    add_format_arguments(p, "cuzk-timeline-sweep/1")
    p.add_argument(
        "--out",
        metavar="FILE",
        help="also write the chart (.png, .svg) or the table (.md, .csv, .json, .txt)",
    )
    p.add_argument("--dark", action="store_true", help="the chart in a dark palette")
    add_workers_argument(p)


def runs_of(command: str, paths: list[str], workers_per_gpu: int | None):  # noqa: ANN201
    """A ``Run`` per log (``whatif.sweep.read_runs``); None after saying why one cannot be
    read."""
    from viewer.export.format import display_path
    from viewer.whatif.sweep import SweepError, read_runs

    try:
        return read_runs(paths, workers_per_gpu, display_path)
    except SweepError as exc:
        fail(command, exc)
        return None


def logs_named(paths: list[str]) -> list[str]:
    """The logs ``paths`` name, as `report` reads them: a folder gives its logs, a quoted
    glob its matches, a log reached twice is read once; what was left out is said on
    stderr."""
    from viewer.export.fleet import expand

    notes: list[str] = []
    logs = expand(paths, notes)
    for note in notes:
        print(f"sweep: {note}", file=sys.stderr)
    return logs


def run(args: argparse.Namespace) -> int:
    from viewer.export.files import OutputRefused, write_output
    from viewer.export.format import display_path, json_bytes
    from viewer.export.sweep import sweep_csv, sweep_dict, sweep_markdown, sweep_text
    from viewer.whatif.sweep import SweepError, sweep

    try:
        memory = memory_model(args)
    except ValueError as exc:
        return fail("sweep", exc)
    suffix = Path(args.out).suffix.lower() if args.out else ""
    if args.out is not None and suffix not in CHART + TABLES:
        return fail(
            "sweep",
            f"--out {display_path(args.out)}: give a .png, .svg, .md, .csv, .json or .txt file",
        )
    args.paths = logs_named(args.paths)
    runs = runs_of("sweep", args.paths, args.workers_per_gpu)
    if runs is None:
        return 2
    base = None
    if args.base is not None:
        from viewer.io.paths import file_identity

        # the log as LOG named it: ./run.log, an absolute path or a link to it is that log
        ident = file_identity(args.base)
        given = [p for p in args.paths if file_identity(p) == ident]
        base = display_path(given[0] if given else args.base)
    try:
        # The command keeps no reference to the runs: the sweep lets each log's tables go
        # once taken (``consume``), before the base run is replayed.
        s = sweep(runs, args.knob, args.values, args.ram_gib, memory, base, consume=True)
    except SweepError as exc:
        return fail("sweep", exc)
    if args.out is not None:
        try:
            if suffix in CHART:
                _write_chart(s, args)
            else:
                data = {
                    ".md": sweep_markdown,
                    ".csv": sweep_csv,
                    ".json": lambda x: json_bytes(sweep_dict(x)),
                    ".txt": sweep_text,
                }[suffix](s)
                write_output(args.out, data, args.paths)
        except OutputRefused as exc:
            return fail("sweep", exc)
        except OSError as exc:
            return fail("sweep", f"cannot write {display_path(args.out)}: {exc}")
        print(f"sweep: wrote {display_path(args.out)}", file=sys.stderr)
    if args.json:
        write_stdout(json_bytes(sweep_dict(s)))
    elif args.markdown:
        write_stdout(sweep_markdown(s))
    else:
        write_stdout(sweep_text(s))
    return 0


def _write_chart(s, args: argparse.Namespace) -> None:  # noqa: ANN001
    # The chart is painted into an image, never shown: no display is needed, and one that
    # is named but gone (a stale DISPLAY over ssh) would make Qt abort the process.
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6 import QtWidgets

    from viewer.ui.windows.sweep_chart import write_chart

    app = QtWidgets.QApplication.instance() or QtWidgets.QApplication(["viewer-sweep"])
    write_chart(s, args.out, args.paths, dark=args.dark)
    app.processEvents()
