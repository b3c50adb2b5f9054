"""`python -m viewer report LOG`: every figure of the analysis, for a terminal, Markdown or JSON."""

from __future__ import annotations

import argparse
import json
import sys

RANGE_HELP = """\
range rules (--range A:B, milliseconds in the session's TIMELINE offsets):
  busy (GPU_START->GPU_END) and kernel intervals are clipped to the range;
  idle gaps are the session's gaps clipped to it, and efficiency = busy time /
  (first GPU_START -> last GPU_END, clipped to the range);
  measured s/proof uses the jobs completed inside the range;
  transitions are those whose next job's first GPU_START lies inside it.
"""


def _range(text: str) -> tuple[float, float]:
    try:
        a, b = (float(x) for x in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected A:B in ms, got {text!r}") from None
    if a > b:
        raise argparse.ArgumentTypeError(f"range start {a:g} is after its end {b:g}")
    return a, b


def add_parser(sub: argparse._SubParsersAction, name: str) -> None:
    p = sub.add_parser(
        name,
        help="kernel time, idle gaps, sector transitions, s/proof and a verdict",
        description="Analyse a cuzk log: CUDA kernel time, GPU efficiency, idle gaps, sector "
        "transitions, theoretical vs measured s/proof, and whether the run is GPU-bound.",
        epilog=RANGE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("path", metavar="LOG", help="log file (.log, .gz, .zst)")
    p.add_argument("--session", type=int, default=None, metavar="N", help="only daemon run N")
    p.add_argument("--range", type=_range, default=None, metavar="A:B", help="time window (ms)")
    fmt = p.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="JSON (schema cuzk-timeline-report/1)")
    fmt.add_argument("--markdown", action="store_true", help="Markdown tables")
    p.add_argument(
        "--workers-per-gpu",
        type=int,
        default=None,
        metavar="N",
        help="GPU workers per GPU when the log has no 'GPU worker started' lines",
    )


def run(args: argparse.Namespace) -> int:
    from viewer.export.report import report_dict, report_markdown, report_text
    from viewer.io import LogError, open_log

    try:
        timeline = open_log(args.path, workers_per_gpu=args.workers_per_gpu)
    except (LogError, OSError) as exc:
        print(f"report: {exc}", file=sys.stderr)
        return 2
    try:
        if args.json:
            text = json.dumps(report_dict(timeline, args.session, args.range), indent=1) + "\n"
        elif args.markdown:
            text = report_markdown(timeline, args.session, args.range)
        else:
            text = report_text(timeline, args.session, args.range)
    except ValueError as exc:  # e.g. no such session
        print(f"report: {exc}", file=sys.stderr)
        return 2
    sys.stdout.write(text)
    return 0
